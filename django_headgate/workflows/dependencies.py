"""Enqueue of a job that depends on others (DESIGN §17).

The parents' rows are locked first, in the enqueue's transaction, so a parent cannot end between
the read of its state and the commit: either it ended before (decided here) or its end, later,
sees the edge and releases the job. Decided at enqueue:

- a parent with no hot row (never existed, or evicted): ``DependencyNotFound``, nothing written;
- a parent that ``succeeded``: nothing to wait for;
- a parent that ended ``dead`` or ``cancelled``: with ``on_parent_failure="cancel"`` the job is
  written ``cancelled`` at once; with ``"run"`` there is nothing to wait for.

The job waits (state ``waiting``, never claimed) for the parents that have not ended. Parents
must exist before their dependents, so a cycle cannot be built.
"""

from django.db import transaction

from ..conf import get_settings
from ..exceptions import DependencyNotFound, InvalidDependency
from ..jobs.enqueue import enqueue_job
from ..jobs.new_jobs import check_job_id
from ..models import Job
from ..store import get_store

ON_PARENT_FAILURE = ("cancel", "run")
#: Most parents one job may wait for.
MAX_PARENTS = 1000
FAILED = ("dead", "cancelled")
TERMINAL = ("succeeded", *FAILED)


def check_parents(depends_on):
    """The parent ids of ``depends_on`` (ids, UUID strings or Job instances), without repeats."""
    if isinstance(depends_on, (str, bytes)) or not hasattr(depends_on, "__iter__"):
        depends_on = [depends_on]
    parent_ids = []
    for parent in depends_on:
        parent_id = check_job_id(getattr(parent, "id", parent) if parent is not None else "")
        if parent_id not in parent_ids:
            parent_ids.append(parent_id)
    if len(parent_ids) > MAX_PARENTS:
        raise InvalidDependency(f"A job may depend on at most {MAX_PARENTS} jobs, not {len(parent_ids)}.",
                                field="depends_on")
    return parent_ids


def check_on_parent_failure(value):
    if value not in ON_PARENT_FAILURE:
        raise InvalidDependency(f"on_parent_failure must be one of {', '.join(ON_PARENT_FAILURE)}, not {value!r}.",
                                field="on_parent_failure")
    return value


def enqueue_spec(spec, using=None, unique_key=None, unique_until="evicted"):
    """Enqueue ``spec`` in the caller's transaction: after its parents when it names
    ``depends_on``, else as ``enqueue``. Returns its ``Job``."""
    using = using or get_settings().database
    check_on_parent_failure(spec.on_parent_failure)
    if not spec.depends_on:
        return enqueue_job(spec, unique_key, unique_until, using)
    if unique_key is not None:
        raise InvalidDependency("A job with depends_on takes no unique_key.", field="unique_key")
    parent_ids = check_parents(spec.depends_on)
    store = get_store(using)
    with transaction.atomic(using=using):
        states = store.lock_parents(parent_ids)
        missing = [str(parent_id) for parent_id in parent_ids if parent_id not in states]
        if missing:
            raise DependencyNotFound(f"No hot job has id {', '.join(missing)}: a job can only depend on "
                                     "jobs that exist.", job_ids=missing)
        job = enqueue_job(spec, None, "evicted", using)
        cancelled = spec.on_parent_failure == "cancel" and any(states[p] in FAILED for p in parent_ids)
        pending = [] if cancelled else [p for p in parent_ids if states[p] not in TERMINAL]
        store.record_parents(job.id, parent_ids, pending, spec.on_parent_failure)
        if cancelled:
            store.cancel_job(job.id)
    return Job.objects.using(using).get(pk=job.id)
