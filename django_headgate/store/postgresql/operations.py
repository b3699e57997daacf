"""PostgreSQL store, operations section: the operator verbs by filter, one bounded batch per
call (shapes in ``store/operation_fragments.py``); batches that make jobs due wake idle workers;
``wait()`` listens for the end of the job it marked awaited, on a session of its own."""

import functools
import time
from contextlib import contextmanager

from django.db import connections

from ...exceptions import UnsupportedUnderTransactionPooling
from ..fragments import TERMINAL_STATES_SQL
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
SQL_OPERATION_CANCEL = OPERATION_CANCEL.format(now=NOW, expires_now=jobs.EXPIRES_NOW.format(job="headgate_job"))
SQL_OPERATION_REQUEST_ABORT = OPERATION_REQUEST_ABORT.format(now=NOW)
SQL_OPERATION_RUN_NOW = OPERATION_RUN_NOW.format(now=NOW)
SQL_SET_JOB_META = SET_JOB_META.format(value="%s::jsonb")

# wait(): subscribe the waiter's own session to the end of awaited jobs (migration 0010's trigger).
SQL_LISTEN_JOB_ENDED = "LISTEN headgate_job_ended"
# wait(): mark a job that has not ended as awaited, so that its end sends a NOTIFY (primary key).
SQL_MARK_AWAITED = (
    f"UPDATE headgate_job SET awaited = TRUE WHERE id = %s AND awaited IS NULL AND state NOT IN {TERMINAL_STATES_SQL}"
)


class PostgreSQLOperations:
    # The job carries the tag (the compliance section's tag test: jsonb containment).
    FILTER_TAG = filter_tag(TAG_CONTAINS, "tags")
    # Created before the store clock plus a bound (negative) number of seconds.
    FILTER_CREATED_BEFORE = "AND created_at < " + jobs.NOW_PLUS_SECONDS.format(seconds="%s")
    ACTION_ELIGIBLE = action_eligible(NOW)

    def wake_workers(self):
        with self.cursor() as cursor:
            cursor.execute(jobs.SQL_NOTIFY, [])

    @contextmanager
    def watch_job_end(self, job_id):
        if self.transaction_pooled:
            raise UnsupportedUnderTransactionPooling(
                f"LISTEN needs a server session of its own, and HEADGATE['POOLING'][{self.alias!r}] is "
                "'transaction': wait() polls instead.", alias=self.alias)
        listener = connections.create_connection(self.alias)
        try:
            listener.ensure_connection()
            raw = listener.connection
            raw.execute(SQL_LISTEN_JOB_ENDED)  # autocommit: listening from now on
            with listener.cursor() as cursor:
                cursor.execute(SQL_MARK_AWAITED, [self.db_uuid(job_id)])
            yield functools.partial(wait_for_payload, raw, str(job_id))
        finally:
            listener.close()


def wait_for_payload(raw, payload, seconds):
    """True as soon as a NOTIFY carrying ``payload`` arrives on ``raw``; False after ``seconds``."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        for notify in raw.notifies(timeout=left, stop_after=1):
            if notify.payload == payload:
                return True
    return False
