"""``headgate.wait(job_id, timeout=None)`` and ``await headgate.await_job(...)`` (DESIGN §16):
the job once it is terminal (succeeded, dead or cancelled).

On PostgreSQL (a direct or session-pooled connection) the waiter LISTENs on a session of its own
and marks the job awaited; migration 0010's trigger sends a NOTIFY when an awaited job ends, so
jobs nobody waits for cost the workers nothing. Elsewhere it polls, from 10 ms up to 0.5 s apart.
Either way the row is read again at least every ``RECHECK_SECONDS``."""

import time

from asgiref.sync import sync_to_async
from django.db import connections

from ..conf import get_settings
from ..exceptions import InvalidJob, JobNotFound, JobWaitTimeout, WaitInsideTransaction
from ..jobs.new_jobs import check_job_id
from ..models import TERMINAL_STATES, Job
from ..store import get_store
from ..values.durations import DAY, seconds_within, shown_value

#: The longest wait a caller may ask for, and the polling pace where there is no NOTIFY.
WAIT_MAX_SECONDS = 7 * DAY
POLL_FIRST_SECONDS, POLL_MAX_SECONDS = 0.01, 0.5
#: Read the row again at least this often, NOTIFY or not (a job deleted meanwhile sends none).
RECHECK_SECONDS = 1.0


def wait(job_id, timeout=None, *, using=None):
    """Block until job ``job_id`` is terminal and return its ``Job``. ``timeout``: seconds or a
    timedelta (None: no limit, else up to 7 days). Raises ``JobWaitTimeout`` when it has not
    ended in time, ``JobNotFound`` when there is no such hot job (or it was deleted meanwhile),
    ``WaitInsideTransaction`` inside a transaction on the Headgate database."""
    if job_id is None:
        raise InvalidJob("wait() needs a job id.")
    job_id = check_job_id(job_id)
    limit = None if timeout is None else seconds_within(timeout, 0, WAIT_MAX_SECONDS)
    if timeout is not None and limit is None:
        raise InvalidJob(f"wait(): timeout must be None or 0 to 7 days of seconds (got {shown_value(timeout)}).")
    using = using or get_settings().database
    if connections[using].in_atomic_block:
        raise WaitInsideTransaction(f"wait({job_id}) inside a transaction would never see the job end.",
                                    job_id=job_id)
    deadline = None if limit is None else time.monotonic() + limit
    finished = _finished_job(job_id, using)
    if finished is not None:
        return finished  # no listener needed
    store = get_store(using)
    if store.supports_listen_notify and not store.transaction_pooled:
        with store.watch_job_end(job_id) as ended:
            return _wait_until_ended(job_id, using, deadline, timeout, lambda left, tries: ended(left))
    return _wait_until_ended(job_id, using, deadline, timeout, _poll_pause)


async def await_job(job_id, timeout=None, *, using=None):
    """``wait()`` for ``async`` code: the same contract, on a worker thread of its own (whose
    database connection is closed when it returns)."""
    return await sync_to_async(_wait_on_own_thread, thread_sensitive=False)(job_id, timeout, using)


def _wait_on_own_thread(job_id, timeout, using):
    try:
        return wait(job_id, timeout, using=using)
    finally:
        connections[using or get_settings().database].close()


def _finished_job(job_id, using):
    """The job when it is terminal, None while it is not; JobNotFound when there is no such job."""
    job = Job.objects.using(using).filter(pk=job_id).first()
    if job is None:
        raise JobNotFound(f"No hot job has id {job_id}.", job_id=job_id)
    return job if job.state in TERMINAL_STATES else None


def _wait_until_ended(job_id, using, deadline, timeout, pause):
    tries = 0
    while True:
        job = _finished_job(job_id, using)
        if job is not None:
            return job
        left = RECHECK_SECONDS if deadline is None else deadline - time.monotonic()
        if left <= 0:
            raise JobWaitTimeout(f"Job {job_id} did not end within {timeout} s.",
                                 job_id=job_id, timeout=timeout)
        pause(min(left, RECHECK_SECONDS), tries)
        tries += 1


def _poll_pause(left, tries):
    time.sleep(min(left, POLL_FIRST_SECONDS * 2 ** min(tries, 10), POLL_MAX_SECONDS))
