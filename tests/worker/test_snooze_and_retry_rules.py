"""A real worker (in this process) applies Snooze and the tasks' retry rules: what it writes,
how it counts, and the ``job_finished`` outcome of each attempt."""

from datetime import datetime, timezone

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.signals import job_finished
from tests.testapp.models import SideEffect
from tests.testapp.retry_tasks import ERRORS
from tests.worker.worker_thread import WorkerThread

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def outcomes():
    """``outcomes(job)``: the ``job_finished`` outcomes of ``job``, in order (a worker thread of
    another test still ending in this process sends signals for its own jobs)."""
    seen = []

    def on_finished(sender, job_id, outcome, **kwargs):
        seen.append((job_id, outcome))

    job_finished.connect(on_finished, weak=False)
    yield lambda job: [outcome for job_id, outcome in seen if job_id == job.id]
    job_finished.disconnect(on_finished)


@pytest.fixture
def quick_retries(settings):
    """Retries due at once (RETRY_BACKOFF_BASE 0) and a small snooze bound."""
    settings.HEADGATE = {**settings.HEADGATE, "RETRY_BACKOFF_BASE": 0, "POLL_INTERVAL": 0.05, "MAX_SNOOZES": 3}


def run_until_claimed(claims):
    """Run a worker until it has claimed ``claims`` jobs and written their outcomes."""
    worker = WorkerThread(max_jobs=claims, concurrency=1, worker_id="rules-worker")
    try:
        return worker.join(timeout=60)
    finally:
        worker.worker.request_stop()


def runs_of(job):
    return SideEffect.objects.filter(job_id=str(job.id)).count()


def failed_at(entry):
    return datetime.fromisoformat(entry["at"]).replace(tzinfo=timezone.utc)


def test_a_snooze_runs_the_job_again_without_spending_its_attempt(outcomes):
    job = headgate.enqueue("tests.testapp.retry_tasks.snooze_then_succeed", args=("s",), kwargs={"seconds": 0})
    stats = run_until_claimed(2)
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.result, row.attempts, row.max_attempts, row.snoozes) == ("succeeded", "s", 1, 1, 1)
    assert row.errors == [] and runs_of(job) == 2
    assert set(SideEffect.objects.filter(job_id=str(job.id)).values_list("attempt", flat=True)) == {1}
    assert outcomes(job) == ["snoozed", "succeeded"]
    assert (stats.snoozed, stats.succeeded, stats.retried, stats.dead) == (1, 1, 0, 0)


def test_past_max_snoozes_a_snooze_is_a_failed_attempt(quick_retries, outcomes):
    job = headgate.enqueue("tests.testapp.retry_tasks.snooze_for_ever", args=("f",))
    # 3 snoozes (MAX_SNOOZES), then attempt 1 fails, is retried, and attempt 2 fails for good.
    stats = run_until_claimed(5)
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, row.snoozes) == ("dead", 2, 3)
    assert [(e["type"], e["attempt"]) for e in row.errors] == [("SnoozeLimitExceeded", 1), ("SnoozeLimitExceeded", 2)]
    assert "snoozed 3 times" in row.errors[0]["message"]
    assert "raise headgate.Snooze(seconds)" in row.errors[0]["traceback"]  # where the task snoozed
    assert outcomes(job) == ["snoozed"] * 3 + ["retrying", "dead"]
    assert (stats.snoozed, stats.retried, stats.dead) == (3, 1, 1)


def test_max_snoozes_zero_makes_every_snooze_a_failure(quick_retries, settings):
    settings.HEADGATE = {**settings.HEADGATE, "MAX_SNOOZES": 0}
    job = headgate.enqueue("tests.testapp.retry_tasks.snooze_then_succeed", args=("z",), kwargs={"seconds": 0})
    run_until_claimed(1)
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.snoozes, row.errors[0]["type"]) == ("dead", None, "SnoozeLimitExceeded")


def test_a_bad_snooze_value_fails_the_attempt(quick_retries):
    job = headgate.enqueue("tests.testapp.retry_tasks.snooze_badly", args=(-1,))
    run_until_claimed(2)  # max_attempts=2: InvalidSnooze is retried like any failure
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.snoozes) == ("dead", None)
    assert [e["type"] for e in row.errors] == ["InvalidSnooze", "InvalidSnooze"]
    assert "from 0 to 604800" in row.errors[0]["message"]


@pytest.mark.parametrize("task, kind, runs, outcome", [
    ("fail_retry_on", "connection", 3, ["retrying", "retrying", "dead"]),
    ("fail_retry_on", "timeout", 3, ["retrying", "retrying", "dead"]),
    ("fail_retry_on", "value", 1, ["dead"]),
    ("fail_no_retry_on", "os", 3, ["retrying", "retrying", "dead"]),
    ("fail_no_retry_on", "permission", 1, ["dead"]),  # no_retry_on wins over retry_on=OSError
    ("fail_no_retry_on", "value", 1, ["dead"]),  # not an OSError: retry_on does not retry it
])
def test_retry_rules_decide_retried_or_dead(outcomes, task, kind, runs, outcome):
    job = headgate.enqueue(f"tests.testapp.retry_tasks.{task}", args=(kind,))
    run_until_claimed(runs)
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, runs_of(job)) == ("dead", runs, runs)
    assert outcomes(job) == outcome
    assert {e["type"] for e in row.errors} == {ERRORS[kind].__qualname__}


def test_the_task_backoff_sets_run_at_by_the_store_clock(settings):
    settings.HEADGATE = {**settings.HEADGATE, "RETRY_BACKOFF_BASE": 1, "RETRY_BACKOFF_MAX": 2}
    job = headgate.enqueue("tests.testapp.retry_tasks.fail_with_slow_backoff")
    run_until_claimed(1)
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts) == ("available", 1)
    delay = (row.run_at - failed_at(row.errors[-1])).total_seconds()
    assert delay == pytest.approx(30.0, abs=0.002)  # base 30 s, no jitter; the settings say 1 s
    Job.objects.filter(pk=job.id).update(run_at=row.run_at.replace(year=2000))
    run_until_claimed(1)
    row = Job.objects.get(pk=job.id)
    assert (row.run_at - failed_at(row.errors[-1])).total_seconds() == pytest.approx(45.0, abs=0.002)  # max


def test_a_task_jitter_fraction_spreads_the_delay():
    job = headgate.enqueue("tests.testapp.retry_tasks.fail_with_jittered_backoff")
    run_until_claimed(1)
    row = Job.objects.get(pk=job.id)
    delay = (row.run_at - failed_at(row.errors[-1])).total_seconds()
    assert 10.0 - 0.002 <= delay <= 30.0 + 0.002  # 20 s +/- 50 %


def test_tasks_without_rules_keep_the_global_backoff():
    job = headgate.enqueue("tests.testapp.tasks.fail_always", max_attempts=2)
    run_until_claimed(1)
    row = Job.objects.get(pk=job.id)
    delay = (row.run_at - failed_at(row.errors[-1])).total_seconds()
    assert 0.15 - 0.002 <= delay <= 0.25 + 0.002  # RETRY_BACKOFF_BASE 0.2 s +/- 25 % (tests/settings.py)
