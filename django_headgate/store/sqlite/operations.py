"""SQLite store, operations section: the operator verbs by filter, one bounded batch per call
(shapes in ``store/operation_fragments.py``; the single writer stands in for SKIP LOCKED)."""

from ..operation_fragments import (
    DISCARDABLE, NOT_YET_DUE, OPERATION_CANCEL, OPERATION_DISCARD, OPERATION_REQUEST_ABORT, OPERATION_RESCHEDULE,
    OPERATION_RETRY, OPERATION_RUN_NOW, OPERATION_SELECT,
)
from ..operation_fragments import SET_JOB_META, SQL_READ_JOB_META  # noqa: F401  (a statement here)
from . import jobs

NOW = jobs.NOW

# Select a batch of matching jobs (primary key order; the batch's write transaction holds them).
SQL_OPERATION_SELECT = OPERATION_SELECT.format(lock="")
# Read a page of matching jobs (list, dry run).
SQL_OPERATION_SELECT_UNLOCKED = OPERATION_SELECT.format(lock="")
SQL_OPERATION_RETRY = OPERATION_RETRY.format(now=NOW, greatest="max")
SQL_OPERATION_CANCEL = OPERATION_CANCEL.format(now=NOW, expires_now=jobs.EXPIRES_NOW)
SQL_OPERATION_REQUEST_ABORT = OPERATION_REQUEST_ABORT.format(now=NOW)
SQL_OPERATION_RUN_NOW = OPERATION_RUN_NOW.format(now=NOW)
SQL_OPERATION_RESCHEDULE = OPERATION_RESCHEDULE.format()
SQL_OPERATION_DISCARD = OPERATION_DISCARD.format()
SQL_SET_JOB_META = SET_JOB_META.format(value="%s")


class SQLiteOperations:
    # The job carries the tag (one element of the JSON list equals it).
    FILTER_TAG = "AND EXISTS (SELECT 1 FROM json_each(headgate_job.tags) WHERE json_each.value = %s)"
    # Created before the store clock plus a bound (negative) strftime modifier.
    FILTER_CREATED_BEFORE = "AND created_at < " + jobs.NOW_PLUS
    ACTION_ELIGIBLE = {"run_now": NOT_YET_DUE.format(now=NOW), "discard": DISCARDABLE}
