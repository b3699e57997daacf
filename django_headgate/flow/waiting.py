"""Why a job waits (DESIGN §15), in words for the job's admin page."""

from ..models import JobState, QueueControl
from ..store import get_store


def waiting_reason(job):
    """A sentence saying what keeps ``job`` from running, or None when nothing flow control
    knows of does (it runs, finished, or is due and its queue is free)."""
    if job.state == JobState.HELD_BACK:
        return (f"Held back: {job.concurrency_limit or 1} job(s) of concurrency key "
                f"{job.concurrency_key!r} already hold a lease; it becomes available when one of "
                "them leaves running (finishes, fails, snoozes, or its lease is rescued).")
    if job.state == JobState.WAITING:
        return (f"Waits for {job.waiting_for or 0} parent job(s) to end (depends_on, docs/workflows.md); "
                "it becomes available when the last one succeeds.")
    if job.state != JobState.AVAILABLE:
        return None
    using = job._state.db or "default"
    control = QueueControl.objects.using(using).filter(queue=job.queue).first()
    if control is not None and control.paused:
        return f"Queue {job.queue!r} is paused: no worker claims from it until it is resumed."
    if job.run_at > get_store(using).now():
        return f"Scheduled: it becomes due at {job.run_at.isoformat()} (store clock)."
    if control is not None and (control.concurrency or control.rate_limit):
        limits = ", ".join(part for part in (
            f"at most {control.concurrency} leased at once" if control.concurrency else "",
            f"at most {control.rate_limit} started" if control.rate_limit else "") if part)
        return f"Due; queue {job.queue!r} is limited ({limits}): it waits for its turn."
    return None
