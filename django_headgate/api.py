"""The public Python API (DESIGN §5): validate the input, then call the store.

Every function validates *before* anything is written, so bad input raises a ``HeadgateError``
subclass and leaves the database as it was. ``using`` picks a database alias; the default is
``HEADGATE["DATABASE"]``. What an enqueue checks and writes is in ``jobs/`` (``jobs/enqueue.py``),
which the periodic duty calls too.
"""

from .compliance.decryption import open_job
from .conf import get_settings
from .exceptions import InvalidJobState, JobNotFound
from .jobs.enqueue import enqueue_job, enqueue_jobs
from .jobs.new_jobs import JobSpec, check_job_id
from .models import Job
from .operations.meta import check_meta, enqueue_with_meta
from .store import get_store
from .workflows.batches import batch, get_batch
from .workflows.chains import chain
from .workflows.dependencies import enqueue_spec

__all__ = ["JobSpec", "batch", "cancel", "chain", "enqueue", "enqueue_many", "get_batch", "get_job", "retry"]


def enqueue(task, args=(), kwargs=None, *, queue=None, priority=None, run_at=None, delay=None,
            unique_key=None, job_id=None, max_attempts=None, retention_class=None,
            retain_forever=False, tags=(), using=None, unique_until="evicted", timeout=None, meta=None,
            depends_on=(), on_parent_failure="cancel", concurrency_key=None, concurrency_limit=None):
    """Enqueue one job in the caller's transaction and return its ``Job``.

    ``task`` must be registered (``@headgate.task``, ``HEADGATE["TASK_MODULES"]``), else
    ``UnregisteredTask``. ``queue``, ``priority``, ``max_attempts`` and ``retention_class`` left
    None take the task's registered defaults, then the settings' (priority 0). With
    ``unique_key``: when a hot job already holds the key, that job is returned if its
    fingerprint (task + arguments) matches, else ``IdempotencyConflict`` is raised. The key is
    held until the row is evicted (``unique_until="evicted"``) or only while the job is not
    terminal (``"finished"``, see ``jobs/unique_modes.py``); keys starting ``periodic:`` are the
    periodic schedules' and refused here (``InvalidUniqueKey``). ``timeout`` (seconds or a
    timedelta, 0.1 s to 7 days; default the task's option, else none) limits each attempt: at the
    deadline the attempt fails with ``JobTimeout`` (docs/job-control.md). ``meta``: a small dict
    for the caller (trace context, request id; not payload), read back as ``current_job().meta``
    (operations/meta.py). ``depends_on`` (job ids or Jobs): the job waits, never claimed, until
    those jobs ended; a parent that ends ``dead`` or ``cancelled`` cancels it, or releases it with
    ``on_parent_failure="run"`` (docs/workflows.md; no ``unique_key`` then). ``concurrency_limit``
    (default the task's option) caps the jobs of ``concurrency_key`` (default the task's key, else
    the task path) that hold a lease at once (docs/flow-control.md). Raises a ``HeadgateError``
    subclass for bad input, before any row is written.
    """
    spec = JobSpec(task, args, kwargs or {}, queue, priority, run_at, delay, max_attempts,
                   retention_class, retain_forever, tags, job_id, timeout, depends_on or (), on_parent_failure,
                   concurrency_key, concurrency_limit)
    check_meta(meta)
    if spec.depends_on or on_parent_failure != "cancel":
        def insert():
            return enqueue_spec(spec, using, unique_key, unique_until)
    else:
        def insert():
            return enqueue_job(spec, unique_key, unique_until, using)
    return enqueue_with_meta(insert, task, queue, meta, using or get_settings().database)


def enqueue_many(specs, *, using=None):
    """Enqueue many :class:`JobSpec` jobs (no unique keys) in one transaction; return their ids.

    Every spec is validated first: one bad spec raises and nothing is written.
    """
    return enqueue_jobs(specs, using)


def get_job(job_id, *, using=None):
    """The hot job with this id, or None. Archived jobs are never returned here. An encrypted
    job's payloads are returned decrypted (docs/compliance.md)."""
    using = using or get_settings().database
    return open_job(Job.objects.using(using).filter(pk=check_job_id(job_id)).first())


def _require_job(job_id, using):
    job = get_job(job_id, using=using)
    if job is None:
        raise JobNotFound(f"No hot job has id {job_id}.", job_id=job_id)
    return job


def cancel(job_id, *, using=None):
    """An available or waiting job -> cancelled (its waiting dependents are cancelled too, or
    released when they run on a parent's failure). A running job gets an abort request
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
