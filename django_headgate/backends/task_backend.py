"""``HeadgateBackend``: a Django Tasks backend (Django >= 6.0) that stores Tasks as Headgate jobs.

Import it through :mod:`django_headgate.backends.tasks`, which also imports cleanly on Django
5.2. ``enqueue`` writes one job through :func:`django_headgate.api.enqueue` (so it joins the
caller's transaction on the Headgate database); ``get_result`` reads the hot row back. Headgate's
own options (max attempts, retention class, unique key, tags) come from the Task
(:class:`HeadgateTask` fields, set in ``@task(...)`` or ``.using(...)``), then from the backend's
``OPTIONS``, then from the ``HEADGATE`` settings.
"""

import logging
import uuid
from dataclasses import dataclass, replace
from functools import partial

from django.core import checks
from django.db import transaction
from django.tasks.backends.base import BaseTaskBackend
from django.tasks.base import Task
from django.tasks.exceptions import InvalidTask, InvalidTaskBackend, TaskResultDoesNotExist
from django.tasks.signals import task_enqueued
from django.utils.json import normalize_json

from ..conf import get_settings
from ..exceptions import HeadgateError, InvalidJob
from ..jobs.ids import uuid7
from ..values.concurrency import check_concurrency_limit, render_concurrency_key
from ..values.payload import check_kwargs
from ..registry.tasks import get_task_to_enqueue, register_django_task
from ..signals import call_receivers, receiver_name
from ..values.job_options import (
    check_max_attempts,
    check_queue_name,
    check_tags,
    check_timeout,
    check_unique_key,
)
from .checks import E_TASKS_OPTIONS, E_TASKS_QUEUE
from .task_results import (
    RUNNER_PATH,
    build_payload,
    is_payload,
    is_task_job,
    task_for_job,
    task_result_for_job,
)

#: Headgate options a Task (or the backend's OPTIONS, except unique_key and timeout) can set.
TASK_OPTION_NAMES = ("max_attempts", "retention_class", "unique_key", "tags", "timeout", "concurrency_key",
                     "concurrency_limit")
BACKEND_OPTION_NAMES = ("max_attempts", "retention_class", "tags")
RETENTION_CLASS_MAX_LENGTH = 100

logger = logging.getLogger(__name__)


def _check_retention_class(key):
    if not isinstance(key, str) or not 1 <= len(key) <= RETENTION_CLASS_MAX_LENGTH:
        raise InvalidJob(f"retention_class must be the key of a registered retention class (got {key!r}).")
    return key


def _check_tags(tags):
    if isinstance(tags, (str, bytes)):
        raise InvalidJob(f"tags must be a list or tuple of strings (got {tags!r}).")
    return tuple(check_tags(tags))


OPTION_CHECKS = {
    "max_attempts": check_max_attempts,
    "retention_class": _check_retention_class,
    "unique_key": check_unique_key,
    "tags": _check_tags,
    "timeout": check_timeout,
    "concurrency_key": lambda key: render_concurrency_key(key, "", (), {}),  # a literal key (docs/flow-control.md)
    "concurrency_limit": check_concurrency_limit,
}


def check_options(options, names):
    """Validate Headgate options (None = not set): return ``(checked options, [error messages])``."""
    checked, errors = {}, []
    for name, value in options.items():
        if name not in names:
            errors.append(f"{name!r} is not a Headgate option (known: {', '.join(names)}).")
        elif value is not None:
            try:
                checked[name] = OPTION_CHECKS[name](value)
            except HeadgateError as exc:
                errors.append(f"{name}: {exc}")
    return checked, errors


def send_task_signal(signal, sender, task_result):
    """Send a Django Tasks signal robustly: a receiver's exception (any ``BaseException`` but a
    real interrupt, as for Headgate's own signals) is logged, never raised."""
    for receiver, error in call_receivers(signal, sender, task_result=task_result):
        logger.error(
            "A Django Tasks signal receiver raised; the job is unaffected.",
            exc_info=error,
            extra={"action": "task_signal_error", "job_id": task_result.id,
                   "receiver": receiver_name(receiver)},
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class HeadgateTask(Task):
    """A Task with Headgate's options; None means "the backend's OPTIONS, then HEADGATE's default".

    Set them in the decorator (``@task(max_attempts=5, tags=["billing"])``) or per call with
    ``.using(unique_key=..., ...)``.
    """

    max_attempts: int | None = None
    retention_class: str | None = None
    unique_key: str | None = None
    tags: tuple[str, ...] | None = None
    timeout: float | None = None  # seconds per attempt (docs/job-control.md)
    concurrency_key: str | None = None  # flow control (docs/flow-control.md)
    concurrency_limit: int | None = None

    def __post_init__(self):
        if isinstance(self.tags, list):
            object.__setattr__(self, "tags", tuple(self.tags))
        # Explicit base call: zero-argument super() does not work in slotted dataclasses.
        Task.__post_init__(self)

    def using(self, *, priority=None, queue_name=None, run_after=None, backend=None,
              max_attempts=None, retention_class=None, unique_key=None, tags=None, timeout=None,
              concurrency_key=None, concurrency_limit=None):
        """A new Task with modified defaults, Headgate's options included."""
        task = Task.using(self, priority=priority, queue_name=queue_name, run_after=run_after,
                          backend=backend)
        changes = {
            name: value for name, value in (
                ("max_attempts", max_attempts), ("retention_class", retention_class),
                ("unique_key", unique_key), ("tags", tags), ("timeout", timeout),
                ("concurrency_key", concurrency_key), ("concurrency_limit", concurrency_limit),
            ) if value is not None
        }
        return replace(task, **changes) if changes else task

    def __call__(self, *args, **kwargs):
        """Run this Task for the Headgate job that names it: called by the worker only.

        A Tasks-backend job's ``task`` is this Task's dotted path, so the worker resolves the
        path to this object and calls it with the job's ``kwargs`` (the payload); the call goes
        to the runner (:func:`~.task_runner.run_django_task`). Anywhere else a Task is not
        callable, as in Django: ``TypeError``.
        """
        from ..worker.context import current_job
        from .task_runner import run_django_task

        job = current_job()
        if (job is None or args or job.task != self.module_path
                or not is_payload(job.task, kwargs) or kwargs["task_path"] != self.module_path):
            raise TypeError(f"Task {self.module_path!r} is not callable: use .enqueue() to queue it "
                            "or .call() to run its function now.")
        return run_django_task(**kwargs)


def stored_task_path(task):
    """The ``task`` column of the Task's job: its own dotted path, which the worker resolves to
    the (callable) HeadgateTask. A Task of another class (made for another backend, then moved
    with ``.using(backend=...)``) is not callable, so its job names the runner instead."""
    return task.module_path if isinstance(task, HeadgateTask) else RUNNER_PATH


class HeadgateBackend(BaseTaskBackend):
    """Django Tasks backend that runs Tasks on Headgate workers (``manage.py headgate_worker``)."""

    task_class = HeadgateTask
    supports_defer = True
    supports_async_task = True  # the runner calls coroutine functions through async_to_sync
    supports_get_result = True
    supports_priority = True  # Django's range, -100..100, is Headgate's

    def __init__(self, alias, params):
        super().__init__(alias, params)
        # Errors are reported by check() (headgate.E021) and raised at enqueue, never here:
        # Django instantiates backends while it runs the checks.
        self.default_options, self.option_errors = check_options(dict(self.options), BACKEND_OPTION_NAMES)

    # -- validation ---------------------------------------------------------------------------

    def validate_task(self, task):
        """Django's validation (raises InvalidTask), then Headgate's queue grammar and options;
        a valid Task is registered in Headgate's task registry."""
        super().validate_task(task)
        try:
            check_queue_name(task.queue_name)
        except HeadgateError as exc:
            raise InvalidTask(str(exc)) from exc
        options = {name: getattr(task, name, None) for name in TASK_OPTION_NAMES}
        _, errors = check_options(options, TASK_OPTION_NAMES)
        if errors:
            raise InvalidTask(f"Invalid Headgate option: {' '.join(errors)}")
        # Django validates every Task it builds (the @task decorator, .using()): that registers
        # it, so a worker runs this Task and no other (DESIGN §5).
        register_django_task(task)

    def check(self, **kwargs):
        where = f"TASKS[{self.alias!r}]"
        errors = list(super().check(**kwargs))
        errors += [
            checks.Error(f"{where}['OPTIONS']: {message}", obj=where, id=E_TASKS_OPTIONS)
            for message in self.option_errors
        ]
        for queue in sorted(self.queues, key=str):
            try:
                check_queue_name(queue)
            except HeadgateError as exc:
                errors.append(checks.Error(f"{where}['QUEUES']: {exc}", obj=where, id=E_TASKS_QUEUE))
        return errors

    # -- enqueue ------------------------------------------------------------------------------

    def job_options(self, task):
        """Headgate ``enqueue()`` options for ``task``: the Task's own, else the backend's."""
        options = {}
        for name in TASK_OPTION_NAMES:
            value = getattr(task, name, None)
            options[name] = value if value is not None else self.default_options.get(name)
        options["tags"] = options["tags"] or ()
        return options

    def enqueue(self, task, args, kwargs):
        """Write the Task as a Headgate job in the caller's transaction; return its TaskResult.

        Raises InvalidTask (Django's validation), TypeError/ValueError for arguments that are
        not JSON, and HeadgateError subclasses for Headgate's checks (kwargs keys that are not
        strings, unknown retention class, IdempotencyConflict, UnregisteredTask for a Task defined
        in a module workers never import) -- all before anything is written. With a
        ``unique_key`` already held by a hot job with the same arguments, that job's result is
        returned.
        """
        from .. import api

        self.validate_task(task)
        if get_settings().validate_task_paths:
            # The job may name the runner (a Task of another class): the Task's own module must
            # still be one a worker imports, else the job ends dead there.
            get_task_to_enqueue(task.module_path)
        if self.option_errors:
            raise InvalidTaskBackend(
                f"TASKS[{self.alias!r}]['OPTIONS'] is invalid: {' '.join(self.option_errors)}")
        check_kwargs(kwargs)  # JSON would make {1: 2} {"1": 2}: the Task would get other arguments
        payload = build_payload(task, self.alias, normalize_json(args), normalize_json(kwargs))
        job_id = uuid7()
        job = api.enqueue(stored_task_path(task), kwargs=payload, queue=task.queue_name, priority=task.priority,
                          run_at=task.run_after, job_id=job_id, **self.job_options(task))
        result = task_result_for_job(job, task)
        if job.id == job_id:  # not an idempotent replay of an existing job
            # The job exists only once the caller's transaction commits (at once in autocommit).
            transaction.on_commit(partial(send_task_signal, task_enqueued, type(self), result),
                                  using=get_settings().database)
        return result

    # -- results ------------------------------------------------------------------------------

    def get_result(self, result_id):
        """The TaskResult of a job this backend enqueued, read from the hot row.

        Raises TaskResultDoesNotExist when no hot row has this id (never enqueued, or already
        evicted by the retention sweep: archived jobs are not read here).
        """
        from ..api import get_job

        try:
            job_id = uuid.UUID(str(result_id))
        except ValueError:
            raise TaskResultDoesNotExist(result_id) from None
        job = get_job(job_id)
        if job is None or not is_task_job(job) or job.kwargs.get("backend") != self.alias:
            raise TaskResultDoesNotExist(result_id)
        return task_result_for_job(job, task_for_job(job, self))
