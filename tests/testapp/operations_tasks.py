"""Tasks of the operator-control tests (meta, tracing), listed in HEADGATE["TASK_MODULES"]."""

from django_headgate import current_job


def return_meta():
    """Returns what the running job sees as its meta."""
    return current_job().meta


def fail_once():
    """Fails its first attempt, succeeds on the next (a retried job: two consumer spans)."""
    if current_job().attempt == 1:
        raise RuntimeError("first attempt fails")
    return "ok"
