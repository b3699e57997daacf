"""MySQL / MariaDB store, operations section: the operator verbs by filter, one bounded batch
per call (shapes in ``store/operation_fragments.py``)."""

from ..operation_fragments import (
    DISCARDABLE, NOT_YET_DUE, OPERATION_CANCEL, OPERATION_DISCARD, OPERATION_REQUEST_ABORT, OPERATION_RESCHEDULE,
    OPERATION_RETRY, OPERATION_RUN_NOW, OPERATION_SELECT,
)
from ..operation_fragments import SET_JOB_META, SQL_READ_JOB_META  # noqa: F401  (a statement here)
from . import jobs

NOW = jobs.NOW

# Lock a batch of matching jobs, skipping rows a worker holds (primary key order).
SQL_OPERATION_SELECT = OPERATION_SELECT.format(lock="FOR UPDATE SKIP LOCKED")
# Read a page of matching jobs without locking them (list, dry run).
SQL_OPERATION_SELECT_UNLOCKED = OPERATION_SELECT.format(lock="")
SQL_OPERATION_RETRY = OPERATION_RETRY.format(now=NOW, greatest="GREATEST")
SQL_OPERATION_CANCEL = OPERATION_CANCEL.format(now=NOW, expires_now=jobs.EXPIRES_NOW)
SQL_OPERATION_REQUEST_ABORT = OPERATION_REQUEST_ABORT.format(now=NOW)
SQL_OPERATION_RUN_NOW = OPERATION_RUN_NOW.format(now=NOW)
SQL_OPERATION_RESCHEDULE = OPERATION_RESCHEDULE.format()
SQL_OPERATION_DISCARD = OPERATION_DISCARD.format()
SQL_SET_JOB_META = SET_JOB_META.format(value="%s")


class MySQLOperations:
    # The job carries the tag (the tags column is a JSON list).
    FILTER_TAG = "AND JSON_CONTAINS(tags, JSON_QUOTE(%s))"
    # Created before the store clock plus a bound (negative) duration in microseconds.
    FILTER_CREATED_BEFORE = "AND created_at < " + jobs.NOW_PLUS
    ACTION_ELIGIBLE = {"run_now": NOT_YET_DUE.format(now=NOW), "discard": DISCARDABLE}
