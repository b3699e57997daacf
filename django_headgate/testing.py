"""Test helpers for projects that use Headgate (DESIGN §17, docs/testing-your-tasks.md).

- :func:`enqueued_jobs`, :func:`assert_enqueued`, :func:`assert_not_enqueued`: what is in the job
  table, matched by task and by any field of ``Job`` (``args``, ``kwargs``, ``queue``,
  ``priority``, ``state``, ``tags``, ``batch_id``...).
- :func:`drain` runs the due jobs in the test's own thread, on its own connection (so inside a
  Django ``TestCase`` transaction too), through the real store and the worker's executor: a
  failure is retried after its back-off (so not again in the same drain unless the back-off is
  zero), a snooze waits, an attempt past its ``timeout`` fails with ``JobTimeout`` (once it
  returns: a test thread cannot be interrupted), and a job's end releases its dependents and
  counts its batch as in a worker, so a chain or a batch drains to its end.
- :func:`run_job` runs one available job now, due or not (a retry after a failure, say).

In a ``TestCase``, ``transaction.on_commit`` callbacks wait for a commit that never comes:
:func:`drain` and :func:`run_job` first run those already registered (as the commit would), so a
view that enqueues ``on_commit`` is drained too. Under pytest-django, use the ``db`` fixture
(same behaviour) or ``transactional_db``.
"""

from collections import Counter
from dataclasses import dataclass, field

from django.db import connections

from .conf import get_settings
from .exceptions import JobTimeout, StaleLease
from .jobs.new_jobs import check_job_id
from .models import Job
from .registry.retry_rules import Backoff
from .registry.tasks import get_task, is_registered, task_path
from .store import get_store
from .store.entries import class_entry, dump_entry
from .store.records import Completion
from .worker.backoff import JITTER_FRACTION, retry_delay_seconds
from .worker.executor import Outcome, run_job as execute
from .worker.storable import storable_value

__all__ = ["DrainResult", "assert_enqueued", "assert_not_enqueued", "drain", "enqueued_jobs", "run_job"]

#: The worker id of the jobs these helpers run (``lease_owner`` while they run).
WORKER_ID = "headgate-testing"
LEASE_SECONDS = 300


def _task_path(task):
    """A task's dotted path from the path itself, a ``@headgate.task`` function or a Django Task."""
    if task is None or isinstance(task, str):
        return task
    if isinstance(getattr(task, "module_path", None), str):  # a Django Task
        return task.module_path
    return task_path(task)


def _matches(job, match):
    for name, expected in match.items():
        value = getattr(job, name)
        if name == "args":
            expected = list(expected)
        if value != expected and str(value) != str(expected):
            return False
    return True


def enqueued_jobs(task=None, *, using=None, **match):
    """Jobs in the hot table (oldest first) of ``task`` (a path, or the task) whose fields equal
    ``match`` (``args=(1, 2)``, ``queue="mail"``, ``state="available"``...)."""
    using = using or get_settings().database
    jobs = Job.objects.using(using).order_by("created_at", "id")
    path = _task_path(task)
    if path is not None:
        jobs = jobs.filter(task=path)
    return [job for job in jobs if _matches(job, match)]


def assert_enqueued(task, *, count=None, using=None, **match):
    """Assert that ``task`` has a job matching ``match`` (exactly ``count`` of them when given);
    returns the matching jobs. The message lists what was enqueued instead."""
    found = enqueued_jobs(task, using=using, **match)
    if (count is None and not found) or (count is not None and len(found) != count):
        others = enqueued_jobs(task, using=using)
        listing = "\n".join(f"  {job.task} args={job.args} kwargs={job.kwargs} queue={job.queue} "
                            f"state={job.state}" for job in others[:20]) or "  (none)"
        wanted = "a job" if count is None else f"{count} job(s)"
        raise AssertionError(f"Expected {wanted} of {_task_path(task)} matching {match}, found {len(found)}. "
                             f"Jobs of this task:\n{listing}")
    return found


def assert_not_enqueued(task, *, using=None, **match):
    """Assert that ``task`` has no job matching ``match``."""
    found = enqueued_jobs(task, using=using, **match)
    if found:
        raise AssertionError(f"Expected no job of {_task_path(task)} matching {match}, found {len(found)}: "
                             + ", ".join(str(job.id) for job in found))


@dataclass
class DrainResult:
    """What a :func:`drain` ran: the ids in run order, and the attempts by how they ended
    (``succeeded``, ``retried``, ``dead``, ``snoozed``, ``cancelled``)."""

    job_ids: list = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)

    def __getitem__(self, outcome):
        return self.outcomes[outcome]

    def __len__(self):
        return len(self.job_ids)


def drain(queue=None, max_jobs=None, *, using=None):
    """Run due jobs (of ``queue``, else of every queue) one by one until none is due or
    ``max_jobs`` ran; returns a :class:`DrainResult`."""
    conf = get_settings()
    using = using or conf.database
    store = get_store(using)
    result = DrainResult()
    while max_jobs is None or len(result) < max_jobs:
        _run_on_commit_callbacks(using)
        claimed = store.claim_jobs(WORKER_ID, [queue] if queue else None, 1, LEASE_SECONDS)
        if not claimed:
            break
        result.job_ids.append(claimed[0].id)
        result.outcomes[_run_and_write(store, conf, claimed[0])] += 1
    _run_on_commit_callbacks(using)
    return result


def run_job(job_id, *, using=None):
    """Run the available job ``job_id`` now (due or not) and return its row afterwards. Raises
    AssertionError when the job is not available (waiting, running or ended)."""
    conf = get_settings()
    using = using or conf.database
    job_id = check_job_id(job_id)
    store = get_store(using)
    _run_on_commit_callbacks(using)
    claimed = store.claim_job_by_id(job_id, WORKER_ID, LEASE_SECONDS)
    if claimed is None:
        job = Job.objects.using(using).filter(pk=job_id).first()
        raise AssertionError(f"Job {job_id} is not available to run (state: {job.state if job else 'no such job'}).")
    _run_and_write(store, conf, claimed)
    _run_on_commit_callbacks(using)
    return Job.objects.using(using).get(pk=job_id)


def _run_on_commit_callbacks(using):
    """Run the ``on_commit`` callbacks registered so far inside the test's transaction (Django's
    ``TestCase``), as its commit would; outside a transaction they ran already."""
    connection = connections[using]
    while connection.in_atomic_block and connection.run_on_commit:
        callbacks, connection.run_on_commit[:] = list(connection.run_on_commit), []
        for _, callback, robust in callbacks:
            if robust:
                try:
                    callback()
                except Exception:  # noqa: BLE001  (as Django runs a robust callback)
                    pass
            else:
                callback()


def _run_and_write(store, conf, claimed):
    """Run one claimed job with the worker's executor and write its outcome; returns how it ended."""
    outcome = execute(claimed, store, WORKER_ID, conf.output_max_chars, conf.max_snoozes,
                      max_result_bytes=conf.max_result_bytes, recycle_connections=False)
    if claimed.timeout is not None and outcome.seconds > claimed.timeout:
        outcome = _timed_out(claimed, outcome.seconds)
    try:
        if outcome.is_snooze:
            store.snooze_job(claimed.id, claimed.fence, outcome.snooze_seconds)
            return "snoozed"
        if outcome.succeeded:
            store.acknowledge_and_claim([Completion(claimed.id, claimed.fence, outcome.result_json)],
                                        WORKER_ID, None, 0, LEASE_SECONDS)
            return Job.objects.using(store.alias).get(pk=claimed.id).state  # atomic() may have ended it
        base, ceiling, jitter = (outcome.backoff or Backoff()).resolve(
            conf.retry_backoff_base, conf.retry_backoff_max, JITTER_FRACTION)
        state = store.fail_job(claimed.id, claimed.fence, dump_entry(storable_value(outcome.error)),
                               retry_delay_seconds(claimed.attempt, base, ceiling, jitter=jitter),
                               give_up=outcome.give_up)
        return "dead" if state == "dead" else "retried"
    except StaleLease:  # the task ended its own job (atomic()), or cancel() did
        return Job.objects.using(store.alias).get(pk=claimed.id).state


def _timed_out(claimed, seconds):
    timeout = JobTimeout(f"The attempt ran past its time limit of {claimed.timeout:g} s ({seconds:.1f} s); "
                         "its result is refused.")
    task = get_task(claimed.task) if is_registered(claimed.task) else None
    return Outcome(claimed, error=class_entry(JobTimeout, claimed.attempt, timeout.message, "", WORKER_ID),
                   give_up=task is not None and not task.retries(timeout),
                   backoff=task.backoff if task is not None else None)
