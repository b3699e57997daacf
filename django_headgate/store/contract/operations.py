"""Store contract, operations section: the operator verbs by filter (DESIGN §16), one bounded
batch per call (``store/operation_fragments.py``)."""

import json
from uuid import UUID

from ...exceptions import UnsupportedOnVendor

from ..fragments import placeholders
from ..operation_fragments import FILTER_QUEUE, FILTER_TASK
from ..records import OperationBatch
from . import runs

#: The first keyset position: every id sorts after it.
FIRST_ID = UUID(int=0)
#: Each action's write: its statement, and whether it binds the states (``{states}``) after the ids
#: (``cancel`` also requests the abort of running jobs: SQL_OPERATION_REQUEST_ABORT).
ACTION_STATEMENTS = {
    "retry": ("SQL_OPERATION_RETRY", True),
    "cancel": ("SQL_OPERATION_CANCEL", False),
    "run_now": ("SQL_OPERATION_RUN_NOW", False),
    "reschedule": ("SQL_OPERATION_RESCHEDULE", False),
    "discard": ("SQL_OPERATION_DISCARD", True),
}

class OperationsContract:
    #: ``AND <the job carries the tag %s>`` and ``AND created_at < <now + the bound duration>``.
    FILTER_TAG = None
    FILTER_CREATED_BEFORE = None
    #: The extra rule of an action, formatted with the vendor's clock (``{now}``).
    ACTION_ELIGIBLE = {}

    def filter_sql(self, job_filter):
        """``(sql, params)`` of a ``JobFilter``'s conditions (closed set, values bound)."""
        parts, params = [], []
        if job_filter.ids:
            parts.append(f"AND id IN ({placeholders(len(job_filter.ids))})")
            params += [self.db_uuid(job_id) for job_id in job_filter.ids]
        for sql, value in ((FILTER_QUEUE, job_filter.queue), (FILTER_TASK, job_filter.task),
                           (self.FILTER_TAG, job_filter.tag)):
            if value is not None:
                parts.append(sql)
                params.append(value)
        if job_filter.older_than is not None:
            parts.append(self.FILTER_CREATED_BEFORE)
            params.append(self.duration_param(-job_filter.older_than))
        return " ".join(parts), params

    @runs("SQL_OPERATION_SELECT", "SQL_OPERATION_SELECT_UNLOCKED")
    def select_job_ids(self, job_filter, states, after_id, limit, *, action=None, lock=False):
        """Up to ``limit`` ids of jobs matching ``job_filter`` in ``states`` (and ``action``'s
        rule) after the keyset position ``after_id`` (None: from the start), by primary key.
        ``lock``: lock them, skipping rows others hold where the vendor can. Returns the ids as
        the driver gives them (pass them back to :meth:`apply_action`)."""
        filters, params = self.filter_sql(job_filter)
        sql = self.sql.SQL_OPERATION_SELECT if lock else self.sql.SQL_OPERATION_SELECT_UNLOCKED
        sql = sql.format(states=placeholders(len(states)), filters=filters,
                         eligible=self.ACTION_ELIGIBLE.get(action, ""))
        after = self.db_uuid(FIRST_ID if after_id is None else after_id)
        with self.cursor() as cursor:
            cursor.execute(sql, [*states, after, *params, limit])
            return [row[0] for row in cursor.fetchall()]

    @runs("SQL_OPERATION_RETRY", "SQL_OPERATION_CANCEL", "SQL_OPERATION_REQUEST_ABORT",
          "SQL_OPERATION_RUN_NOW", "SQL_OPERATION_RESCHEDULE", "SQL_OPERATION_DISCARD")
    def apply_action(self, action, job_filter, states, after_id, limit, *, run_at=None):
        """One bounded batch of ``action`` (``retry``, ``cancel``, ``run_now``, ``reschedule``
        to ``run_at``, ``discard``) in its own transaction: lock up to ``limit`` matching jobs in
        ``states`` after ``after_id``, then write exactly those whose state still allows it (a
        job a worker claimed meanwhile is left alone; ``cancel`` requests the abort of running
        ones). No statement touches more than ``limit`` rows. Returns an ``OperationBatch``."""
        with self.atomic():
            ids = self.select_job_ids(job_filter, states, after_id, limit, action=action, lock=True)
            if not ids:
                return OperationBatch(selected=0, changed=0, abort_requested=0, last_id=None)
            changed, aborted = self.write_action(action, ids, states, run_at)
            if changed and action == "cancel":
                # Jobs waiting for the cancelled ones end or run now, in this transaction
                # (store/contract/workflows.py: ids that did not turn terminal are ignored).
                self.release_dependents([self.from_db_uuid(db_id) for db_id in ids])
            if changed and action in ("retry", "run_now", "reschedule"):
                self.wake_workers()
        return OperationBatch(selected=len(ids), changed=changed, abort_requested=aborted,
                              last_id=self.from_db_uuid(ids[-1]))

    def write_action(self, action, ids, states, run_at):
        """``(changed, abort_requested)`` of ``action``'s write of the locked ``ids``."""
        fields = {"ids": placeholders(len(ids)), "states": placeholders(len(states)),
                  "eligible": self.ACTION_ELIGIBLE.get(action, "")}
        statement, binds_states = ACTION_STATEMENTS[action]
        head = [self.db_datetime(run_at)] if action == "reschedule" else []  # SET run_at = %s
        with self.cursor() as cursor:
            cursor.execute(getattr(self.sql, statement).format(**fields),
                           [*head, *ids, *(states if binds_states else ())])
            changed = cursor.rowcount
            aborted = 0
            if action == "cancel" and "running" in states:
                cursor.execute(self.sql.SQL_OPERATION_REQUEST_ABORT.format(**fields), list(ids))
                aborted = cursor.rowcount
        return changed, aborted

    @runs("SQL_SET_JOB_META")
    def set_job_meta(self, job_id, meta_json):
        """Store the meta of a job just inserted (caller's transaction); False when the job
        already had one or has run (an idempotent replay's holder: nothing changes)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SET_JOB_META, [meta_json, self.db_uuid(job_id)])
            return cursor.rowcount == 1

    @runs("SQL_READ_JOB_META")
    def read_job_meta(self, job_id):
        """The job's meta as a dict ({} when it has none or is gone)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_READ_JOB_META, [self.db_uuid(job_id)])
            row = cursor.fetchone()
        value = row[0] if row else None
        if isinstance(value, str):
            value = json.loads(value)
        return value or {}

    def wake_workers(self):
        """Wake idle workers for jobs just made due (PostgreSQL NOTIFY, on commit); others poll."""

    def watch_job_end(self, job_id):
        """A context manager for ``wait()`` where ``supports_listen_notify``: on a session of its
        own it listens for the end of awaited jobs, marks ``job_id`` awaited (a job that ends
        then sends a NOTIFY) and yields ``ended(seconds) -> bool``, True once that NOTIFY came.
        Elsewhere raises ``UnsupportedOnVendor`` (wait() polls)."""
        raise UnsupportedOnVendor(f"LISTEN/NOTIFY is not available on {self.vendor}.", vendor=self.vendor)
