"""MySQL / MariaDB store, operations section: the operator verbs by filter, one bounded batch
per call (shapes in ``store/operation_fragments.py``)."""

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

# Lock a batch of matching jobs, skipping rows a worker holds (primary key order).
SQL_OPERATION_SELECT = OPERATION_SELECT.format(lock="FOR UPDATE SKIP LOCKED")
SQL_OPERATION_RETRY = OPERATION_RETRY.format(now=NOW, greatest="GREATEST")
SQL_OPERATION_CANCEL = OPERATION_CANCEL.format(now=NOW, expires_now=jobs.EXPIRES_NOW)
SQL_OPERATION_REQUEST_ABORT = OPERATION_REQUEST_ABORT.format(now=NOW)
SQL_OPERATION_RUN_NOW = OPERATION_RUN_NOW.format(now=NOW)
SQL_SET_JOB_META = SET_JOB_META.format(value="%s")


class MySQLOperations:
    # The job carries the tag (the compliance section's tag test).
    FILTER_TAG = filter_tag(TAG_CONTAINS, "tags")
    # Created before the store clock plus a bound (negative) duration in microseconds.
    FILTER_CREATED_BEFORE = "AND created_at < " + jobs.NOW_PLUS
    ACTION_ELIGIBLE = action_eligible(NOW)
