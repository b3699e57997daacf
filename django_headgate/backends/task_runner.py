"""The Headgate task that runs a Django Task inside a worker, and sends the framework's signals.

A Django Tasks job's ``task`` is the Task's own dotted path: the worker resolves it to the
:class:`~.task_backend.HeadgateTask` object, whose ``__call__`` hands the job's payload to
:func:`run_django_task` (older rows name ``RUNNER_PATH``, which the worker calls directly), so the
worker itself knows nothing of Django Tasks. The runner reads
the job row, rebuilds the Task and its TaskResult, sends ``task_started``, calls the function
(with a ``TaskContext`` when the Task ``takes_context``), then sends ``task_finished`` with the
status the worker's acknowledgement is about to record: SUCCESSFUL, FAILED on the last attempt,
or READY when Headgate will retry. Signals are sent robustly: a failing receiver is logged and
never changes the job's outcome.
"""

from dataclasses import replace

from django.tasks import TaskContext, task_backends
from django.tasks.base import TaskResultStatus
from django.tasks.exceptions import InvalidTaskBackend
from django.tasks.signals import task_finished, task_started
from django.utils.json import normalize_json

from ..conf import get_settings
from ..exceptions import UnknownTask, UnregisteredTask
from ..registry.tasks import DJANGO_TASK, is_registered
from ..store import get_store
from ..worker.context import current_job, json_result, result_too_large
from ..worker.error_entries import describe_error
from .task_backend import HeadgateBackend, send_task_signal
from .task_results import (
    build_result_envelope,
    import_task,
    task_error,
    task_for_job,
    task_result_for_job,
)


def run_django_task(*, task_path, backend, args, kwargs):
    """Run the Django Task ``task_path`` with its arguments; return the result envelope.

    Runs only inside a Headgate worker (it needs ``current_job()``). Raises what the Task
    raises (the worker records it and retries or gives up), and UnknownTask, which the worker
    never retries, when the Task or its backend can no longer be found.
    """
    job = current_job()
    if job is None:
        raise RuntimeError("run_django_task runs inside a Headgate worker job only.")
    task_backend, result = _running_result(job, task_path, backend)
    sender = type(task_backend)
    send_task_signal(task_started, sender, result)
    task = result.task
    try:
        if task.takes_context:
            value = task.call(TaskContext(task_result=result), *args, **kwargs)
        else:
            value = task.call(*args, **kwargs)
    except BaseException as exc:
        # Sent inside the except block, as Django's backends do: its log receiver reads exc_info.
        is_last = job.attempt >= job.max_attempts
        send_task_signal(task_finished, sender, _failed_result(result, exc, is_last=is_last))
        raise
    try:
        return_value = normalize_json(value)  # as Django's backends store it
        envelope = build_result_envelope(return_value, job.worker_id)
        size = len(json_result(envelope))  # the JSON the worker stores
    except (TypeError, ValueError):
        # Returned as is, the value makes the worker give up at once; report that outcome.
        error = TypeError(f"The task's return value is not JSON-serialisable: {type(value).__name__}")
        send_task_signal(task_finished, sender, _failed_result(result, error, is_last=True))
        return value
    limit = get_settings().max_result_bytes
    if size > limit:
        # The worker fails the job with ResultTooLarge (the same check); report that outcome.
        error = result_too_large("result", size, limit)
        send_task_signal(task_finished, sender, _failed_result(result, error, is_last=True))
        return envelope
    succeeded = _finished_result(result, TaskResultStatus.SUCCESSFUL, return_value)
    send_task_signal(task_finished, sender, succeeded)
    return envelope


def _running_result(job, task_path, backend_alias):
    """(backend, TaskResult of this attempt) from the job's row; UnknownTask when unresolvable."""
    from ..api import get_job

    if not is_registered(task_path, kind=DJANGO_TASK):
        raise UnregisteredTask(f"Django Task {task_path!r} is not registered in this worker: its module "
                               "was not imported at start-up (an app's tasks module or TASK_MODULES).",
                               task=task_path)
    try:
        task_backend = task_backends[backend_alias]
        if not isinstance(task_backend, HeadgateBackend):
            raise InvalidTaskBackend(f"TASKS[{backend_alias!r}] is no longer a HeadgateBackend.")
        import_task(task_path, job.job_id)
    except Exception as exc:
        raise UnknownTask(f"Django Task {task_path!r} on backend {backend_alias!r} cannot run: {exc}",
                          task=task_path) from exc
    row = get_job(job.job_id)
    return task_backend, task_result_for_job(row, task_for_job(row, task_backend))


def _finished_result(result, status, return_value=None, errors=None):
    finished_at = None
    if status in (TaskResultStatus.SUCCESSFUL, TaskResultStatus.FAILED):
        finished_at = get_store(get_settings().database).now()  # the store clock, as the row will say
    finished = replace(result, status=status, finished_at=finished_at,
                       errors=result.errors if errors is None else errors)
    object.__setattr__(finished, "_return_value", return_value)
    return finished


def _failed_result(result, exc, is_last):
    """FAILED on the last attempt, else READY (Headgate retries it after a back-off)."""
    entry = describe_error(exc, result.attempts)
    status = TaskResultStatus.FAILED if is_last else TaskResultStatus.READY
    return _finished_result(result, status, errors=[*result.errors, task_error(entry)])

