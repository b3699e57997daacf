"""Headgate job rows seen as Django Tasks results (Django >= 6.0).

A Django Task is stored as an ordinary Headgate job whose ``task`` is the Task's own dotted
path (what the admin, its filters and ``headgate_status`` show) and whose ``kwargs`` are the
*payload*: the same path, the backend alias and the Task's own arguments. Rows written before
migration 0005 (and Tasks created for another backend's task class) name the runner
(``RUNNER_PATH``) instead; both forms are Tasks-backend rows. This module holds that payload
format and the mapping from a job row to a :class:`~django.tasks.TaskResult`: status, errors,
worker ids, return value.
"""

import builtins

from django.tasks.base import Task, TaskError, TaskResult, TaskResultStatus
from django.tasks.exceptions import TaskResultDoesNotExist
from ..exceptions import UnregisteredTask
from ..models import JobState
from ..registry.tasks import DJANGO_TASK, get_task

#: The runner's path: the ``task`` of Tasks-backend rows written before migration 0005, and of
#: Tasks whose class is not HeadgateTask (a stable path: it is stored in job rows).
RUNNER_PATH = "django_headgate.backends.tasks.run_django_task"

#: The keys of a Tasks-backend job's ``kwargs``, exactly.
PAYLOAD_KEYS = frozenset({"task_path", "backend", "args", "kwargs"})

#: The worker id reported for an attempt whose worker is not recorded.
UNKNOWN_WORKER = "unknown"

STATUS_BY_STATE = {
    JobState.AVAILABLE: TaskResultStatus.READY,  # new, deferred, or waiting for its retry
    JobState.RUNNING: TaskResultStatus.RUNNING,
    JobState.SUCCEEDED: TaskResultStatus.SUCCESSFUL,
    JobState.DEAD: TaskResultStatus.FAILED,
    JobState.CANCELLED: TaskResultStatus.FAILED,
}


# -- the payload of a Django Tasks job ---------------------------------------------------------


def build_payload(task, backend_alias, args, kwargs):
    """The job kwargs that let the runner call ``task`` again in a worker."""
    return {"task_path": task.module_path, "backend": backend_alias, "args": args, "kwargs": kwargs}


def is_payload(task, kwargs):
    """True when a row's ``task`` and ``kwargs`` are those of a Tasks-backend job: the payload's
    exact keys, and ``task`` either the Task's own path or the runner's."""
    return (isinstance(kwargs, dict) and kwargs.keys() == PAYLOAD_KEYS
            and task in (kwargs["task_path"], RUNNER_PATH))


def is_task_job(job):
    return is_payload(job.task, job.kwargs)


def build_result_envelope(return_value, worker_id):
    """The job's ``result`` on success: the return value and the worker that produced it."""
    return {"return_value": return_value, "worker_id": worker_id}


# -- job row -> TaskResult ---------------------------------------------------------------------


def import_task(task_path, result_id=None):
    """The registered Task a payload names (nothing is imported because a row names it);
    TaskResultDoesNotExist when it no longer names a registered Task."""
    try:
        task = get_task(task_path, kind=DJANGO_TASK).func
    except UnregisteredTask:
        task = None
    if not isinstance(task, Task):
        raise TaskResultDoesNotExist(
            f"Result {result_id}: {task_path!r} no longer names a Task registered in this process, "
            "so its result cannot be read."
        )
    return task


def task_for_job(job, backend):
    """The job's Task as the backend's task class, with the row's queue, priority and options.

    ``run_after`` is the job's ``run_at`` when that is later than its enqueue time (a deferred
    start, or the back-off before its next attempt), else None.
    """
    payload = job.kwargs
    task = import_task(payload["task_path"], job.id)
    run_after = job.run_at if job.run_at and job.created_at and job.run_at > job.created_at else None
    return backend.task_class(
        func=task.func, priority=job.priority, queue_name=job.queue, backend=backend.alias,
        run_after=run_after, takes_context=task.takes_context, max_attempts=job.max_attempts,
        retention_class=job.retention_class, unique_key=job.unique_key, tags=tuple(job.tags or ()),
        timeout=job.timeout,
    )


def task_error(entry):
    """One ``errors`` entry as a TaskError (exception class path + traceback)."""
    type_name = str(entry.get("type") or "Exception")
    path = entry.get("type_path")
    if not path:
        path = f"builtins.{type_name}" if isinstance(getattr(builtins, type_name, None), type) else type_name
    traceback = entry.get("traceback") or f"{type_name}: {entry.get('message', '')}\n"
    return TaskError(exception_class_path=path, traceback=traceback)


def _entry_worker_id(entry):
    return entry.get("worker_id") or None


def worker_ids(job):
    """One worker id per attempt (``TaskResult.attempts`` is the length of this list).

    Failed attempts name their worker in ``errors``; the current attempt is the lease owner; a
    successful one is recorded in the result envelope. Unrecorded workers are ``"unknown"``.
    """
    ids = [UNKNOWN_WORKER] * job.attempts
    for entry in job.errors or []:
        attempt = entry.get("attempt") if isinstance(entry, dict) else None
        worker_id = _entry_worker_id(entry) if attempt else None
        if isinstance(attempt, int) and 1 <= attempt <= job.attempts and worker_id:
            ids[attempt - 1] = worker_id
    last = None
    if job.state == JobState.RUNNING:
        last = job.lease_owner
    elif job.state == JobState.SUCCEEDED and isinstance(job.result, dict):
        last = job.result.get("worker_id")
    if ids and last:
        ids[-1] = last
    return ids


def task_result_for_job(job, task):
    """The TaskResult of a Django Tasks job row, for ``task`` (the Task it was enqueued for)."""
    result = TaskResult(
        task=task,
        id=str(job.id),
        status=STATUS_BY_STATE[job.state],
        enqueued_at=job.created_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        last_attempted_at=job.started_at,
        args=job.kwargs["args"],
        kwargs=job.kwargs["kwargs"],
        backend=job.kwargs["backend"],
        errors=[task_error(entry) for entry in job.errors or [] if isinstance(entry, dict)],
        worker_ids=worker_ids(job),
    )
    if job.state == JobState.SUCCEEDED and isinstance(job.result, dict):
        object.__setattr__(result, "_return_value", job.result.get("return_value"))
    return result
