"""SQLite store, operations section: the operator verbs by filter, one bounded batch per call
(shapes in ``store/operation_fragments.py``; the single writer stands in for SKIP LOCKED)."""

from ..operation_fragments import (
    OPERATION_CANCEL, OPERATION_REQUEST_ABORT, OPERATION_RETRY, OPERATION_RUN_NOW, OPERATION_SELECT, SET_JOB_META,
    action_eligible, filter_tag,
)
from ..operation_fragments import (  # noqa: F401  (statements of this vendor, the same on every vendor)
    SQL_OPERATION_DISCARD, SQL_OPERATION_RESCHEDULE, SQL_OPERATION_SELECT_UNLOCKED, SQL_READ_JOB_META,
)
from . import jobs
from .compliance import TAG_CONTAINS

NOW = jobs.NOW

# Select a batch of matching jobs (primary key order; the batch's write transaction holds them).
SQL_OPERATION_SELECT = OPERATION_SELECT.format(lock="")
SQL_OPERATION_RETRY = OPERATION_RETRY.format(now=NOW, greatest="max")
SQL_OPERATION_CANCEL = OPERATION_CANCEL.format(now=NOW, expires_now=jobs.EXPIRES_NOW)
SQL_OPERATION_REQUEST_ABORT = OPERATION_REQUEST_ABORT.format(now=NOW)
SQL_OPERATION_RUN_NOW = OPERATION_RUN_NOW.format(now=NOW)
SQL_SET_JOB_META = SET_JOB_META.format(value="%s")


class SQLiteOperations:
    # The job carries the tag (the compliance section's tag test; json_each needs the table's name).
    FILTER_TAG = filter_tag(TAG_CONTAINS, "headgate_job.tags")
    # Created before the store clock plus a bound (negative) strftime modifier.
    FILTER_CREATED_BEFORE = "AND created_at < " + jobs.NOW_PLUS
    ACTION_ELIGIBLE = action_eligible(NOW)
