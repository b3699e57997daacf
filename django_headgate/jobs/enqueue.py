"""Enqueue (DESIGN §5): a checked ``NewJob`` inserted through the store, with its unique key's
rule and the ``job_enqueued`` signal on commit. ``api.enqueue`` and ``api.enqueue_many`` call
:func:`enqueue_job` and :func:`enqueue_jobs`; the periodic duty calls :func:`enqueue_periodic_tick`
(so no duty imports the public API above it).
"""

from django.db import transaction

from ..conf import get_settings
from ..exceptions import InvalidDependency
from ..models import Job
from ..signals import send_job_enqueued_on_commit
from ..store import get_store
from .new_jobs import JobSpec, OptionsCache, build_new_job, job_instance
from .unique_modes import (
    ATTEMPTS, FINISHED, check_unique_until, enqueue_until_finished, holder_or_conflict, key_contended,
)


def enqueue_job(spec, unique_key=None, unique_until="evicted", using=None, *, is_periodic_tick=False):
    """Insert the job of ``spec`` in the caller's transaction and return its ``Job`` (``api.enqueue``
    documents the arguments); with ``unique_key``, the job that holds the key when it matches."""
    conf = get_settings()
    using = using or conf.database
    mode = check_unique_until(unique_until, unique_key)
    new_job = build_new_job(spec, conf, using, unique_key=unique_key, is_periodic_tick=is_periodic_tick)
    store = get_store(using)
    if new_job.concurrency_key is None:
        return _insert_job(store, new_job, mode, using)
    # A limited job is inserted and given its key in one transaction: no claim sees it keyless.
    with transaction.atomic(using=using):
        job = _insert_job(store, new_job, mode, using)
        if job.id == new_job.id:
            store.set_concurrency([new_job])
        return job


def _insert_job(store, new_job, mode, using):
    if mode == FINISHED:
        return enqueue_until_finished(store, new_job, job_instance)
    # The existing holder of a unique key can be evicted between our insert and our read:
    # then the key is free again and the insert is retried.
    for _ in range(ATTEMPTS):
        inserted = store.insert_job(new_job)
        if inserted is not None:
            job = job_instance(new_job, *inserted, using)
            send_job_enqueued_on_commit([job], using)
            return job
        holder = Job.objects.using(using).filter(unique_key=new_job.unique_key).first()
        if holder is not None:
            return holder_or_conflict(holder, new_job)
    raise key_contended(new_job)


def enqueue_periodic_tick(task, args, kwargs, *, queue, run_at, unique_key, using):
    """The periodic duty's enqueue of one tick: as :func:`enqueue_job`, with the tick's key in the
    ``periodic:`` namespace that every other caller is refused (``InvalidUniqueKey``)."""
    spec = JobSpec(task, args, kwargs or {}, queue, run_at=run_at)
    return enqueue_job(spec, unique_key, "evicted", using, is_periodic_tick=True)


def enqueue_jobs(specs, using=None):
    """The jobs of ``specs`` (no unique keys) checked, then inserted in one transaction in
    statements the store can take; returns their ids (``api.enqueue_many``)."""
    conf = get_settings()
    using = using or conf.database
    specs = list(specs)
    if any(spec.depends_on for spec in specs):
        raise InvalidDependency("enqueue_many takes no depends_on: use enqueue(), or headgate.chain().",
                                field="depends_on")
    options = OptionsCache(conf, using)
    new_jobs = [build_new_job(spec, conf, using, options=options) for spec in specs]
    if new_jobs:
        store = get_store(using)
        with transaction.atomic(using=using):
            for batch in _batches_by_bytes(new_jobs, store.max_insert_bytes):
                store.insert_jobs(batch)
            keyed = [new_job for new_job in new_jobs if new_job.concurrency_key is not None]
            if keyed:
                store.set_concurrency(keyed)
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


