"""The task registry (DESIGN §5, §10): the only functions a worker ever calls.

A row in ``headgate_job`` names its task by dotted path, and anyone who can write such a row
could otherwise make a worker import and call any function at all (``os.system``). So a worker
never imports a module because a row names it: it looks the path up here and refuses a path
that is not registered. Tasks are registered in three ways, all at import time:

- ``@headgate.task`` (bare, or with options) on a module-level function;
- ``HEADGATE["TASK_MODULES"]``: every public function *defined* in those modules (names not
  starting with ``_``; functions a module merely imports are not registered);
- a Django ``@task`` on the Headgate Tasks backend (the backend registers it when Django
  validates the Task).

At start-up (``AppConfig.ready()``) :func:`discover_tasks` imports the ``tasks`` module of every
installed app, as the admin autodiscovers ``admin`` modules, then the ``TASK_MODULES``. Nothing
else is imported on behalf of a job. So a task defined in a module that only a web process
imports (``myapp/emails.py``, imported by a view) is registered there and never in a worker: its
jobs would all end ``dead``. The registry records the modules that registered tasks while
Django was starting (before ``apps.ready``: app loading, the ``ready()`` methods, discovery),
which every process that starts Django imports alike, and :func:`get_task_to_enqueue` refuses,
at enqueue, a task whose module is not among them.

Options of ``@headgate.task``: ``queue``, ``priority``, ``max_attempts``, ``retention_class``
and ``timeout`` are the task's defaults at enqueue (an option given to ``enqueue()`` overrides
them). ``retry_on``, ``no_retry_on`` and ``backoff`` are the task's retry rules, applied by the
worker to each failed attempt (``retry_rules.py``); tasks registered otherwise keep the global
ones. ``cron`` is validated as ``HEADGATE["PERIODIC"]``'s crons are (``values.schedules.cron_error``) and
stored on the entry for the periodic duty (DESIGN §12).
"""

import inspect
import logging
import threading
from dataclasses import dataclass, field

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import autodiscover_modules

from ..exceptions import InvalidTaskDefinition, InvalidTaskOption, InvalidTimeout, UnregisteredTask
from ..values.text import check_text
from ..values.schedules import cron_error
from .retry_rules import Backoff, check_backoff, check_retry_classes, is_retried
from ..values.concurrency import check_concurrency_limit, check_key_option, parse_rate_limit
from ..values.job_options import check_max_attempts, check_priority, check_queue_name, check_timeout

logger = logging.getLogger(__name__)

NATIVE = "native"
DJANGO_TASK = "django_task"


@dataclass(frozen=True)
class RegisteredTask:
    """One registered task: its dotted path, what to call, and its defaults at enqueue."""

    path: str
    func: object
    kind: str = NATIVE
    queue: str | None = None
    priority: int | None = None
    max_attempts: int | None = None
    retention_class: str | None = None
    timeout: float | None = None  # seconds per attempt (DESIGN §12)
    # Stored for job control (DESIGN §12); not acted on yet.
    retry_on: tuple = field(default=())
    no_retry_on: tuple = field(default=())
    cron: str | None = None
    backoff: Backoff | None = None  # the task's retry back-off; None: the global settings
    concurrency_limit: int | None = None  # flow control (DESIGN §15): leased jobs per key
    concurrency_key: object = None  # a kwargs template or a callable; None: the task as a whole
    rate_limit: tuple | None = None  # (jobs, window seconds) started across all workers, or None
    encrypt: bool = False  # payloads stored encrypted (DESIGN §18, compliance/encryption.py)

    def enqueue_defaults(self):
        """The options ``enqueue()`` takes from the task when the caller gives none."""
        return {"queue": self.queue, "priority": self.priority, "max_attempts": self.max_attempts,
                "retention_class": self.retention_class, "timeout": self.timeout,
                "concurrency_limit": self.concurrency_limit, "concurrency_key": self.concurrency_key}

    def retries(self, exc):
        """True when a failed attempt that raised ``exc`` may be retried (``retry_on``, ``no_retry_on``)."""
        return is_retried(exc, self.retry_on, self.no_retry_on)


_tasks = {}  # dotted path -> RegisteredTask
_lock = threading.Lock()
#: Modules that registered a task while Django was starting (every process imports them).
_startup_modules = set()


def task_path(func):
    """The dotted path a module-level function is registered under: ``module.function``."""
    return f"{func.__module__}.{func.__qualname__}"


def _check_module_level(func):
    if not inspect.isfunction(func):
        raise InvalidTaskDefinition(f"@headgate.task decorates a function (got {type(func).__name__}).")
    if func.__qualname__ != func.__name__ or func.__name__ == "<lambda>" or func.__module__ == "__main__":
        raise InvalidTaskDefinition(
            f"{func.__qualname__!r} is not a module-level function of an importable module: a "
            "worker could not find it by its dotted path.")


def _check_timeout(timeout):
    try:
        return check_timeout(timeout)
    except InvalidTimeout as exc:
        raise InvalidTaskOption(str(exc), option="timeout", field="timeout") from None


def _check_options(queue, priority, max_attempts, retention_class, timeout, retry_on, no_retry_on, cron,
                   backoff=None, concurrency_limit=None, concurrency_key=None, rate_limit=None, encrypt=False):
    if retention_class is not None and not (isinstance(retention_class, str) and retention_class):
        raise InvalidTaskDefinition(f"retention_class must be a class key (got {retention_class!r}).")
    message = None if cron is None else cron_error(cron)  # HEADGATE["PERIODIC"]'s rule
    if message:
        raise InvalidTaskOption(f"@headgate.task(cron=...): {message}.", option="cron")
    retry_on, no_retry_on = check_retry_classes(retry_on, no_retry_on)
    return dict(
        queue=None if queue is None else check_queue_name(queue),
        priority=None if priority is None else check_priority(priority),
        max_attempts=None if max_attempts is None else check_max_attempts(max_attempts),
        retention_class=retention_class,
        timeout=_check_timeout(timeout),
        retry_on=retry_on,
        no_retry_on=no_retry_on,
        cron=cron,
        backoff=check_backoff(backoff),
        **_check_concurrency(concurrency_limit, concurrency_key),
        rate_limit=None if rate_limit is None else parse_rate_limit(rate_limit, _rate_option_error),
        encrypt=_check_encrypt(encrypt),
    )


def _rate_option_error(message, **details):
    return InvalidTaskOption(message, option="rate_limit", **details)


def _check_concurrency(limit, key):
    limit = check_concurrency_limit(limit, InvalidTaskOption)
    if key is not None and limit is None:
        raise InvalidTaskOption("concurrency_key needs a concurrency_limit.", option="concurrency_key")
    return {"concurrency_limit": limit, "concurrency_key": check_key_option(key)}


def _check_encrypt(encrypt):
    if not isinstance(encrypt, bool):
        raise InvalidTaskOption(f"encrypt must be True or False (got {encrypt!r}).", option="encrypt")
    return encrypt


def register_task(func, *, name=None, kind=NATIVE, replace=True, **options):
    """Register ``func`` under ``name`` (default: its dotted path); return the RegisteredTask.

    ``replace=False`` keeps an entry already registered under that path (TASK_MODULES does not
    override the options a decorator gave). Raises InvalidTaskDefinition for a function that is
    not module-level or for a bad option."""
    if kind == NATIVE and name is None:
        _check_module_level(func)
    path = check_text(name or task_path(func), "task")
    entry = RegisteredTask(path, func, kind, **_check_options(**{
        "queue": None, "priority": None, "max_attempts": None, "retention_class": None,
        "timeout": None, "retry_on": (), "no_retry_on": (), "cron": None, **options}))
    with _lock:
        if not apps.ready:
            _startup_modules.add(task_module(entry))
        if replace or path not in _tasks:
            _tasks[path] = entry
        return _tasks[path]


def task(func=None, *, queue=None, priority=None, max_attempts=None, retention_class=None,
         timeout=None, retry_on=(), no_retry_on=(), cron=None, backoff=None, concurrency_limit=None,
         concurrency_key=None, rate_limit=None, encrypt=False):
    """Register a module-level function as a Headgate task; return the function unchanged.

    Bare (``@headgate.task``) or with options (``@headgate.task(queue="billing", max_attempts=5)``).
    ``queue``, ``priority``, ``max_attempts``, ``retention_class`` and ``timeout`` are the
    defaults of its jobs (``enqueue()`` arguments override them); ``retry_on``, ``no_retry_on``
    and ``backoff`` (a dict of ``base``, ``max``, ``jitter``) are its retry rules
    (``retry_rules.py``); ``cron`` is for the periodic duty; ``concurrency_limit`` and
    ``concurrency_key`` limit its leased jobs and ``rate_limit`` ("R/s|m|h") the jobs started
    per window across all workers (DESIGN §15, ``values/concurrency.py``); ``encrypt=True`` stores
    its jobs' payloads encrypted (HEADGATE["ENCRYPTION"], docs/compliance.md). Raises
    InvalidTaskOption naming a bad option."""
    options = dict(queue=queue, priority=priority, max_attempts=max_attempts, retention_class=retention_class,
                   timeout=timeout, retry_on=retry_on, no_retry_on=no_retry_on, cron=cron, backoff=backoff,
                   concurrency_limit=concurrency_limit, concurrency_key=concurrency_key, rate_limit=rate_limit,
                   encrypt=encrypt)

    def decorate(function):
        register_task(function, **options)
        return function

    return decorate if func is None else decorate(func)


def register_django_task(django_task):
    """Register a Django Tasks ``Task`` under its ``module_path`` (the Headgate backend calls this)."""
    return register_task(django_task, name=django_task.module_path, kind=DJANGO_TASK)


def register_module(module):
    """Register every public function defined in ``module`` (keeping decorated entries); return the paths."""
    paths = []
    for name, value in vars(module).items():
        if name.startswith("_") or not inspect.isfunction(value) or value.__module__ != module.__name__:
            continue
        if value.__qualname__ != name:  # an alias of another function
            continue
        paths.append(register_task(value, replace=False).path)
    return paths


def unregister_task(path):
    """Forget a registered task; returns True when it was registered. Its queued jobs will end dead."""
    with _lock:
        return _tasks.pop(path, None) is not None


def is_registered(path, kind=None):
    entry = _tasks.get(path)
    return entry is not None and (kind is None or entry.kind == kind)


def get_task(path, kind=None):
    """The RegisteredTask for ``path``; UnregisteredTask when it is not registered (nothing is imported)."""
    entry = _tasks.get(path) if isinstance(path, str) else None
    if entry is None or (kind is not None and entry.kind != kind):
        raise UnregisteredTask(
            f"Task {path!r} is not registered in this process. A process registers the tasks of "
            "each installed app's tasks module and of the modules in HEADGATE['TASK_MODULES'] (with "
            "@headgate.task, Django's @task on the Headgate backend, or any public function of a "
            "TASK_MODULES module): define the task in one of those, or list its module in TASK_MODULES.",
            task=path)
    return entry


def task_module(entry):
    """The module whose import registers ``entry`` (a Django Task's: its function's)."""
    func = entry.func.func if entry.kind == DJANGO_TASK else entry.func
    return func.__module__


def get_task_to_enqueue(path):
    """``get_task(path)``, and UnregisteredTask when the task's module registered no task while
    Django was starting (it was imported later, by a view or a test): a worker would never
    register it, and every job of it would end dead. Checked once Django has started."""
    entry = get_task(path)
    module = task_module(entry)
    if apps.ready and module not in _startup_modules:
        app_tasks = f"{module.rpartition('.')[0] or module}.tasks"
        raise UnregisteredTask(
            f"Task {path!r} is defined in {module!r}, a module workers never import (they import each "
            f"installed app's tasks module and HEADGATE['TASK_MODULES']), so its jobs would end dead. "
            f"Move it into an app's tasks module (such as {app_tasks!r}), or add {module!r} to "
            "HEADGATE['TASK_MODULES'].", task=path)
    return entry


def registered_paths():
    return sorted(_tasks)


def discover_tasks(task_modules):
    """Import every installed app's ``tasks`` module, then ``task_modules`` (registering their functions)."""
    from importlib import import_module

    autodiscover_modules("tasks")
    for module_path in task_modules:
        try:
            module = import_module(module_path)
        except ImportError as exc:
            raise ImproperlyConfigured(
                f"HEADGATE['TASK_MODULES'] names {module_path!r}, which cannot be imported: {exc}") from exc
        register_module(module)
    logger.debug("Tasks registered.", extra={"action": "tasks_discovered", "rows": len(_tasks)})


def rate_limited_tasks():
    """``{task path: (jobs, window seconds)}`` of the registered tasks with a rate limit."""
    with _lock:
        return {path: entry.rate_limit for path, entry in _tasks.items() if entry.rate_limit is not None}
