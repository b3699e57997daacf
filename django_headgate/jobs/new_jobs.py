"""What ``enqueue`` and ``enqueue_many`` write (DESIGN §5): a :class:`JobSpec` checked and
resolved into a ``NewJob`` before anything is written, and the ``Job`` instance of a row just
inserted, built without reading it back.

An option a spec leaves None takes the registered task's default, then the setting's. No
database access but the retention class and queue policy lookups (``retention_classes.py``, cached).
"""

import functools
import uuid
from dataclasses import dataclass, field

from ..compliance.decryption import opened_json
from ..compliance.encryption import stored_payload
from ..exceptions import InvalidConcurrency, InvalidJob, InvalidRunAt
from .ids import uuid7
from ..models import Job, JobState
from ..values.payload import check_args, dump_json, load_json
from ..registry.tasks import get_task, get_task_to_enqueue
from .retention_classes import resolve_retention_class
from ..store.records import NewJob
from ..values.concurrency import check_concurrency_limit, render_concurrency_key
from ..values.job_options import (
    check_delay,
    check_max_attempts,
    check_priority,
    check_queue_name,
    check_run_at,
    check_tags,
    check_task_path,
    check_timeout,
    check_unique_key,
    fingerprint,
)


@dataclass
class JobSpec:
    """One job for :func:`enqueue_many`; the fields mean what :func:`enqueue`'s arguments mean."""

    task: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    queue: str | None = None
    priority: int | None = None
    run_at: object = None
    delay: object = None
    max_attempts: int | None = None
    retention_class: str | None = None
    retain_forever: bool = False
    tags: tuple = ()
    job_id: object = None
    timeout: object = None
    #: Workflows (docs/workflows.md): the jobs this one waits for, and what their failure does.
    depends_on: tuple = ()
    on_parent_failure: str = "cancel"
    #: Flow control (docs/flow-control.md): the key whose leased jobs the limit caps.
    concurrency_key: str | None = None
    concurrency_limit: int | None = None


def check_job_id(job_id):
    if job_id is None:
        return uuid7()
    if isinstance(job_id, uuid.UUID):
        return job_id
    try:
        return uuid.UUID(str(job_id))
    except ValueError:
        raise InvalidJob(f"{job_id!r} is not a job id (a UUID).") from None


def _delay_seconds(run_at, delay):
    if delay is not None and run_at is not None:
        raise InvalidRunAt("Pass run_at or delay, not both.", field="delay")
    return check_delay(delay)


_NO_DEFAULTS = {}


def _task_defaults(task, conf):
    """The registered task's enqueue defaults; none for an unregistered path when
    VALIDATE_TASK_PATHS is off (the worker still refuses to run it)."""
    if conf.validate_task_paths:
        return get_task_to_enqueue(task).enqueue_defaults()
    try:
        return get_task(task).enqueue_defaults()
    except InvalidJob:
        return _NO_DEFAULTS


def _first_set(*values):
    return next((value for value in values if value is not None), None)


def build_new_job(spec, conf, using, unique_key=None, options=None, is_periodic_tick=False):
    """Validate a JobSpec into a NewJob ready to insert; raises before anything is written.

    An option the spec leaves None takes the registered task's default, then the setting's.
    ``options``: an :class:`OptionsCache` shared by the specs of one ``enqueue_many`` call.
    ``is_periodic_tick``: the periodic duty's own enqueue, whose key is in the reserved namespace."""
    task, queue, priority, max_attempts, tags_json, retention_class, timeout, limit, key_option = (
        _resolve_options(spec, conf, using) if options is None else options.resolve(spec))
    _, _, args_json, kwargs_json = check_args(spec.args, spec.kwargs or {}, conf.max_payload_bytes)
    run_at = check_run_at(spec.run_at)
    key = None if limit is None else render_concurrency_key(key_option, task, spec.args, spec.kwargs or {})
    args_json, kwargs_json, fingerprint_ = stored_payload(task, queue, args_json, kwargs_json, fingerprint)
    return NewJob(
        id=check_job_id(spec.job_id),
        queue=queue,
        task=task,
        args_json=args_json,
        kwargs_json=kwargs_json,
        priority=priority,
        run_at=run_at,
        delay_seconds=_delay_seconds(run_at, spec.delay),
        max_attempts=max_attempts,
        unique_key=check_unique_key(unique_key, is_periodic_tick=is_periodic_tick),
        fingerprint=fingerprint_,
        tags_json=tags_json,
        retention_class=retention_class,
        timeout=timeout,
        concurrency_key=key,
        concurrency_limit=limit,
    )


def _concurrency(spec, defaults):
    """(limit, key option) of the spec: a per-call key is taken literally, the task's is a
    template or a callable; a key without a limit is refused."""
    limit = check_concurrency_limit(_first_set(spec.concurrency_limit, defaults.get("concurrency_limit")))
    if spec.concurrency_key is not None:
        if not isinstance(spec.concurrency_key, str):
            raise InvalidConcurrency(f"concurrency_key must be a string (got {spec.concurrency_key!r}).",
                                     field="concurrency_key")
        if limit is None:
            raise InvalidConcurrency("concurrency_key needs a concurrency_limit.", field="concurrency_key")
        return limit, lambda args, kwargs, key=spec.concurrency_key: key
    return limit, defaults.get("concurrency_key")


def _resolve_options(spec, conf, using):
    """The spec's options checked and resolved: (task, queue, priority, max_attempts, tags JSON,
    retention class, timeout seconds, concurrency limit, concurrency key option)."""
    task = check_task_path(spec.task)
    defaults = _task_defaults(task, conf)
    queue = check_queue_name(_first_set(spec.queue, defaults.get("queue"), conf.default_queue))
    max_attempts = _first_set(spec.max_attempts, defaults.get("max_attempts"), conf.default_max_attempts)
    retention_class = spec.retention_class
    if retention_class is None and not spec.retain_forever:
        retention_class = defaults.get("retention_class")
    return (
        task, queue, check_priority(_first_set(spec.priority, defaults.get("priority"), 0)),
        check_max_attempts(max_attempts), dump_json(check_tags(spec.tags), "tags"),
        resolve_retention_class(queue, retention_class, spec.retain_forever, using),
        check_timeout(_first_set(spec.timeout, defaults.get("timeout"))),
        *_concurrency(spec, defaults),
    )


class OptionsCache:
    """Resolved options of one ``enqueue_many`` call, by the spec fields they are made of: the
    specs of a batch mostly share task, queue and the rest, and resolving them (registry,
    queue policy, checks) was most of the call's Python time. Payload, id and times are checked
    per spec."""

    def __init__(self, conf, using):
        self.conf, self.using, self._resolved = conf, using, {}

    def resolve(self, spec):
        key = self._key(spec)
        if key is None:
            return _resolve_options(spec, self.conf, self.using)
        options = self._resolved.get(key)
        if options is None:
            options = self._resolved[key] = _resolve_options(spec, self.conf, self.using)
        return options

    @staticmethod
    def _key(spec):
        """The fields, with the types of the numbers (1, 1.0 and True are equal keys but not all
        valid input); None when a field is unhashable (resolved without the cache)."""
        tags = tuple(spec.tags) if type(spec.tags) is list else spec.tags
        key = (spec.task, spec.queue, spec.priority, type(spec.priority), spec.max_attempts,
               type(spec.max_attempts), spec.retention_class, bool(spec.retain_forever), tags,
               spec.timeout, type(spec.timeout), spec.concurrency_limit, type(spec.concurrency_limit),
               spec.concurrency_key)
        try:
            hash(key)
        except TypeError:
            return None
        return key


def job_instance(new_job, created_at, run_at, using):
    """The Job model instance of a row just inserted, without reading it back."""
    return _loaded_instance(
        Job, using,
        id=new_job.id, queue=new_job.queue, task=new_job.task,
        args=opened_json(new_job.args_json), kwargs=opened_json(new_job.kwargs_json),
        priority=new_job.priority, state=JobState.AVAILABLE, run_at=run_at, attempts=0,
        max_attempts=new_job.max_attempts, fence=0, unique_key=new_job.unique_key,
        fingerprint=new_job.fingerprint, errors=[], tags=load_json(new_job.tags_json),
        retention_class=new_job.retention_class, created_at=created_at, timeout=new_job.timeout,
        concurrency_key=new_job.concurrency_key, concurrency_limit=new_job.concurrency_limit,
    )


_IMMUTABLE = (type(None), str, int, float, bool)


@functools.cache
def _field_defaults(model):
    """(attname, default, None) of each concrete field whose default is an immutable constant,
    (attname, None, field) of the others (a fresh list or dict each time: ``get_default()``)."""
    defaults = []
    for model_field in model._meta.concrete_fields:
        value = model_field.get_default()
        constant = type(value) in _IMMUTABLE and not callable(model_field.default)
        name = model_field.attname
        defaults.append((name, value, None) if constant else (name, None, model_field))
    return tuple(defaults)


def _loaded_instance(model, using, **values):
    """``model(**values)`` as a row loaded from ``using``: built the way ``Model.from_db`` builds
    rows read back (positional ``__init__``, several times faster than keywords), with every
    field not given at its default."""
    row = [values.pop(name) if name in values
           else default if model_field is None else model_field.get_default()
           for name, default, model_field in _field_defaults(model)]
    if values:
        raise TypeError(f"{model.__name__} has no field(s) {', '.join(sorted(values))}.")
    return model.from_db(using, None, row)
