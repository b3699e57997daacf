"""Tasks of the flow-control tests (DESIGN §15): each run records when it started and ended."""

import time

import django_headgate as headgate
from django_headgate import current_job


@headgate.task(concurrency_limit=1, concurrency_key="account:{account}")
def one_at_a_time_per_account(account, seconds):
    """Limited to one leased job per account; records its run."""
    _record_run(f"account:{account}", seconds)


@headgate.task
def timed_run(label, seconds):
    """Unlimited unless the caller gives a key; records its run under ``label``."""
    _record_run(label, seconds)


def _record_run(label, seconds):
    from .models import RunInterval

    started_at = time.time()
    time.sleep(seconds)
    RunInterval.objects.create(label=label, job_id=str(current_job().job_id), started_at=started_at,
                               ended_at=time.time())


@headgate.task(rate_limit="10/s")
def ten_per_second(label):
    """At most 10 started per second across all workers; records its run."""
    _record_run(label, 0)
