"""The operator verbs by filter (DESIGN §16): ``retry_jobs``, ``cancel_jobs``, ``run_jobs_now``,
``reschedule_jobs`` and ``discard_jobs``.

Each validates everything first (a ``HeadgateError`` before any write), then works in bounded
batches of ``HEADGATE["OPERATIONS"]["BATCH_SIZE"]`` jobs, one transaction each: no statement
touches more rows than that. A batch locks its jobs (skipping rows a worker holds) and its write
re-checks the state, so a running job is never overwritten; ``cancel_jobs`` asks running jobs to
abort, as ``cancel()`` does."""

import logging
from dataclasses import dataclass

from ..conf import get_settings
from ..exceptions import InvalidRunAt
from ..store import get_store
from ..values.job_options import check_run_at
from .filters import action_states, job_filter

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JobsChanged:
    """What a verb did: ``count`` jobs changed (for ``cancel``: waiting jobs cancelled plus
    running jobs asked to abort, the latter also in ``abort_requested``) in ``batches`` batches."""

    action: str
    count: int = 0
    batches: int = 0
    abort_requested: int = 0

    def __int__(self):
        return self.count


def retry_jobs(*, ids=None, queue=None, task=None, state=None, tag=None, older_than=None, using=None):
    """dead/cancelled jobs matching the filter -> available now (one more attempt when they were
    exhausted), as ``retry()`` does for one. Returns a :class:`JobsChanged`."""
    return apply_by_filter("retry", job_filter(ids, queue, task, state, tag, older_than), using=using)


def cancel_jobs(*, ids=None, queue=None, task=None, state=None, tag=None, older_than=None, using=None):
    """Waiting jobs matching the filter -> cancelled; running ones get an abort request (they end
    ``cancelled`` when their task returns), as ``cancel()`` does for one. Returns a :class:`JobsChanged`."""
    return apply_by_filter("cancel", job_filter(ids, queue, task, state, tag, older_than), using=using)


def run_jobs_now(*, ids=None, queue=None, task=None, state=None, tag=None, older_than=None, using=None):
    """Waiting jobs matching the filter that are not yet due (deferred, snoozed, backing off
    before a retry) become due now. Returns a :class:`JobsChanged`."""
    return apply_by_filter("run_now", job_filter(ids, queue, task, state, tag, older_than), using=using)


def reschedule_jobs(*, at, ids=None, queue=None, task=None, state=None, tag=None, older_than=None,
                    using=None):
    """Waiting jobs matching the filter run at ``at`` (an aware datetime) instead. Returns a
    :class:`JobsChanged`; raises ``InvalidRunAt`` for a bad ``at``."""
    if at is None:
        raise InvalidRunAt("reschedule_jobs needs at= (an aware datetime).", field="at")
    run_at = check_run_at(at)
    return apply_by_filter("reschedule", job_filter(ids, queue, task, state, tag, older_than), run_at=run_at,
                           using=using)


def discard_jobs(*, ids=None, queue=None, task=None, state=None, tag=None, older_than=None, using=None):
    """Delete the jobs matching the filter that never ran (available or cancelled, no attempt
    spent, never snoozed). Returns a :class:`JobsChanged`."""
    return apply_by_filter("discard", job_filter(ids, queue, task, state, tag, older_than), using=using)


def apply_by_filter(action, checked_filter, *, run_at=None, using=None):
    """Run ``action`` over every job ``checked_filter`` matches, one bounded batch at a time
    (keyset on the job id, so a pass ends however many jobs stay matching)."""
    states = action_states(action, checked_filter)
    settings = get_settings()
    size = settings.operations_batch_size
    store = get_store(using or settings.database)
    count = aborted = batches = 0
    for part in checked_filter.id_parts(size):
        after = None
        while True:
            batch = store.apply_action(action, part, states, after, size, run_at=run_at)
            batches += 1
            count += batch.changed + batch.abort_requested
            aborted += batch.abort_requested
            if batch.selected < size or part.ids:  # a part names at most `size` ids
                break
            after = batch.last_id
    logger.info("operator %s: %d jobs in %d batches", action, count, batches,
                extra={"action": action, "rows": count, "batches": batches})
    return JobsChanged(action, count, batches, aborted)
