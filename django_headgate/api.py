"""The public Python API (DESIGN §5): validate the input, then call the store.

Every function validates *before* anything is written, so bad input raises a ``HeadgateError``
subclass and leaves the database as it was. ``using`` picks a database alias; the default is
``HEADGATE["DATABASE"]``. Checking a job's input and building the ``Job`` of an inserted row are
in ``new_jobs.py``.
"""

from django.db import transaction

from .conf import get_settings
from .exceptions import IdempotencyConflict, InvalidJobState, JobNotFound
from .models import Job
from .new_jobs import JobSpec, OptionsCache, build_new_job, check_job_id, job_instance
from .signals import send_job_enqueued_on_commit
from .store import get_store
from .unique_modes import FINISHED, check_unique_until, enqueue_until_finished

__all__ = ["JobSpec", "cancel", "enqueue", "enqueue_many", "get_job", "retry"]


def enqueue(task, args=(), kwargs=None, *, queue=None, priority=None, run_at=None, delay=None,
            unique_key=None, job_id=None, max_attempts=None, retention_class=None,
            retain_forever=False, tags=(), using=None, unique_until="evicted", timeout=None):
    """Enqueue one job in the caller's transaction and return its ``Job``.

    ``task`` must be registered (``@headgate.task``, ``HEADGATE["TASK_MODULES"]``), else
    ``UnregisteredTask``. ``queue``, ``priority``, ``max_attempts`` and ``retention_class`` left
    None take the task's registered defaults, then the settings' (priority 0). With
    ``unique_key``: when a hot job already holds the key, that job is returned if its
    fingerprint (task + arguments) matches, else ``IdempotencyConflict`` is raised. The key is
    held until the row is evicted (``unique_until="evicted"``) or only while the job is not
    terminal (``"finished"``, see ``unique_modes.py``); keys starting ``periodic:`` are the
    periodic schedules' and refused here (``InvalidUniqueKey``). ``timeout`` (seconds or a
    timedelta, 0.1 s to 7 days; default the task's option, else none) limits each attempt: at the
    deadline the attempt fails with ``JobTimeout`` (docs/job-control.md). Raises a
    ``HeadgateError`` subclass for bad input, before any row is written.
    """
    spec = JobSpec(task, args, kwargs or {}, queue, priority, run_at, delay, max_attempts,
                   retention_class, retain_forever, tags, job_id, timeout)
    return _enqueue(spec, unique_key, unique_until, using)


def enqueue_periodic_tick(task, args, kwargs, *, queue, run_at, unique_key, using):
    """The periodic duty's enqueue of one tick: as :func:`enqueue`, with the tick's key in the
    ``periodic:`` namespace that every other caller is refused (``InvalidUniqueKey``)."""
    spec = JobSpec(task, args, kwargs or {}, queue, run_at=run_at)
    return _enqueue(spec, unique_key, "evicted", using, is_periodic_tick=True)


def _enqueue(spec, unique_key, unique_until, using, is_periodic_tick=False):
    conf = get_settings()
    using = using or conf.database
    mode = check_unique_until(unique_until, unique_key)
    new_job = build_new_job(spec, conf, using, unique_key=unique_key, is_periodic_tick=is_periodic_tick)
    store = get_store(using)
    if mode == FINISHED:
        return enqueue_until_finished(store, new_job, job_instance)
    # The existing holder of a unique key can be evicted between our insert and our read:
    # then the key is free again and the insert is retried.
    for _ in range(3):
        inserted = store.insert_job(new_job)
        if inserted is not None:
            job = job_instance(new_job, *inserted, using)
            send_job_enqueued_on_commit([job], using)
            return job
        existing = Job.objects.using(using).filter(unique_key=new_job.unique_key).first()
        if existing is None:
            continue
        if existing.fingerprint != new_job.fingerprint:
            raise IdempotencyConflict(
                f"unique_key {new_job.unique_key!r} is held by job {existing.id} with other "
                "task arguments.",
                unique_key=new_job.unique_key,
                job_id=existing.id,
            )
        return existing
    raise IdempotencyConflict(f"unique_key {new_job.unique_key!r} is contended; try again.")


def enqueue_many(specs, *, using=None):
    """Enqueue many :class:`JobSpec` jobs (no unique keys) in one transaction; return their ids.

    Every spec is validated first: one bad spec raises and nothing is written.
    """
    conf = get_settings()
    using = using or conf.database
    options = OptionsCache(conf, using)
    new_jobs = [build_new_job(spec, conf, using, options=options) for spec in specs]
    if new_jobs:
        store = get_store(using)
        with transaction.atomic(using=using):
            for batch in _batches_by_bytes(new_jobs, store.max_insert_bytes):
                store.insert_jobs(batch)
            send_job_enqueued_on_commit([job.id for job in new_jobs], using)
    return [job.id for job in new_jobs]


def _job_bytes(new_job):
    # Escaping can double JSON text in a statement (every quote); the rest of a row is small.
    return 2 * (len(new_job.args_json) + len(new_job.kwargs_json) + len(new_job.tags_json)) + 512


def _batches_by_bytes(new_jobs, max_bytes):
    """Split the jobs so that no batch exceeds ``max_bytes`` (a lone larger job is its own batch);
    None: one batch (the store bounds its statements by rows only)."""
    if max_bytes is None:
        yield new_jobs
        return
    batch, size = [], 0
    for new_job in new_jobs:
        job_bytes = _job_bytes(new_job)
        if batch and size + job_bytes > max_bytes:
            yield batch
            batch, size = [], 0
        batch.append(new_job)
        size += job_bytes
    if batch:
        yield batch


def get_job(job_id, *, using=None):
    """The hot job with this id, or None. Archived jobs are never returned here."""
    using = using or get_settings().database
    return Job.objects.using(using).filter(pk=check_job_id(job_id)).first()


def _require_job(job_id, using):
    job = get_job(job_id, using=using)
    if job is None:
        raise JobNotFound(f"No hot job has id {job_id}.", job_id=job_id)
    return job


def cancel(job_id, *, using=None):
    """An available job -> cancelled. A running job gets an abort request
    (``abort_requested_at``, store clock): it stays ``running``, its task sees
    ``current_job().abort_requested`` within about a second, and it ends ``cancelled`` when it
    returns or raises (docs/job-control.md).

    Returns the updated Job. Raises JobNotFound, or InvalidJobState for a finished job."""
    using = using or get_settings().database
    job_id = check_job_id(job_id)
    if get_store(using).cancel_job(job_id) is None:
        job = _require_job(job_id, using)
        raise InvalidJobState(f"Job {job_id} is {job.state}; only available or running jobs can be cancelled.",
                              job_id=job_id, state=job.state)
    return _require_job(job_id, using)


def retry(job_id, *, using=None):
    """dead/cancelled -> available now (one more attempt if they were exhausted).

    Returns the updated Job. Raises JobNotFound, or InvalidJobState for another state."""
    using = using or get_settings().database
    job_id = check_job_id(job_id)
    if get_store(using).retry_job(job_id) is None:
        job = _require_job(job_id, using)
        raise InvalidJobState(f"Job {job_id} is {job.state}; only dead or cancelled jobs can be retried.",
                              job_id=job_id, state=job.state)
    return _require_job(job_id, using)
