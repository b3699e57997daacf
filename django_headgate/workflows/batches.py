"""``headgate.batch()``: jobs enqueued together whose callbacks run once, when the last of them
ended (DESIGN §17).

The ``with`` block is one transaction: the batch row, its members and its callback jobs commit
together (no member can end before the batch knows its total). Each callback is a job enqueued
at the block's end under the unique key ``batch:<id>:<kind>`` and held ``waiting``; the
transaction that ends the last member releases it (the store's ``settle_batch``, part of the
release step): ``on_finish`` always, ``on_success`` when every member succeeded, ``on_dead``
when at least one ended dead; a callback that does not apply ends ``cancelled``.
"""

from contextlib import contextmanager
from dataclasses import replace

from django.db import transaction

from ..conf import get_settings
from ..exceptions import InvalidDependency
from ..jobs.enqueue import enqueue_job, enqueue_jobs
from ..jobs.ids import uuid7
from ..jobs.new_jobs import JobSpec, check_job_id
from ..models import Batch, JobState
from ..store import get_store
from .dependencies import enqueue_spec

CALLBACKS = ("on_success", "on_finish", "on_dead")
ENDED = (JobState.SUCCEEDED, JobState.DEAD, JobState.CANCELLED)


class BatchBuilder:
    """The batch being built in a ``with headgate.batch(...) as b:`` block."""

    def __init__(self, batch_id, using):
        self.id = batch_id
        self.using = using
        self.total = 0
        self.callback_ids = {}  # filled when the block ends

    def enqueue(self, task, args=(), kwargs=None, **options):
        """Enqueue a member; takes ``headgate.enqueue``'s options but ``unique_key`` and
        ``using``. Returns its ``Job``."""
        return self.enqueue_spec(JobSpec(task, args, kwargs or {}, **options))

    def enqueue_spec(self, spec):
        job = enqueue_spec(spec, self.using)
        get_store(self.using).add_batch_members(self.id, [job.id], [job.id] if job.state in ENDED else ())
        self.total += 1
        return job

    def enqueue_many(self, specs):
        """Enqueue many members (``JobSpec`` without ``depends_on``) in bounded statements;
        returns their ids."""
        job_ids = enqueue_jobs(specs, self.using)
        if job_ids:
            get_store(self.using).add_batch_members(self.id, job_ids)
        self.total += len(job_ids)
        return job_ids


def check_callback(kind, spec):
    if spec is None:
        return None
    if isinstance(spec, str):
        return JobSpec(spec)
    if not isinstance(spec, JobSpec):
        raise InvalidDependency(f"{kind} takes a JobSpec or a task path, not {type(spec).__name__}.", field=kind)
    if spec.depends_on:
        raise InvalidDependency(f"{kind} runs when the batch ends: it takes no depends_on.", field=kind)
    return spec


@contextmanager
def batch(*, on_success=None, on_finish=None, on_dead=None, using=None):
    """``with headgate.batch(on_finish=JobSpec(...)) as b: b.enqueue(...)``: see the module."""
    callbacks = {kind: check_callback(kind, spec) for kind, spec in
                 zip(CALLBACKS, (on_success, on_finish, on_dead)) if spec is not None}
    using = using or get_settings().database
    store = get_store(using)
    with transaction.atomic(using=using):
        builder = BatchBuilder(uuid7(), using)
        store.insert_batch(builder.id)
        yield builder
        for kind, spec in callbacks.items():
            spec = replace(spec, job_id=check_job_id(spec.job_id))
            job = enqueue_job(spec, f"batch:{builder.id}:{kind}", "evicted", using)
            builder.callback_ids[kind] = job.id
        store.close_batch(builder.id, builder.total, builder.callback_ids)


def get_batch(batch_id, *, using=None):
    """The batch with this id (``Batch``: ``total``, ``counts``, callback ids,
    ``finished_at``), or None."""
    using = using or get_settings().database
    return Batch.objects.using(using).filter(pk=check_job_id(batch_id)).first()
