"""Store contract, workflows section (DESIGN §17): a dependent job's parents locked and recorded at
enqueue, and the one release step that every transaction ending a parent runs.

``release_dependents(parent_ids)`` is called inside the transaction that made those parents
terminal (the acknowledgement of a success, a failure that ends ``dead``, the cancellation of an
available, waiting or aborted job, the rescue of a lapsed lease that ends ``dead``). A parent's
terminal transition is fenced, so it happens once, and so does its release: crash-safe, exactly
once. Successes only run it for rows flagged ``has_dependents`` (independent jobs pay nothing).
"""

import json
from collections import Counter, defaultdict

from ..fragments import placeholders
from ..records import ClaimedJob
from . import runs

TERMINAL = ("succeeded", "dead", "cancelled")


class WorkflowsContract:
    @runs("SQL_LOCK_PARENTS", "SQL_FLAG_PARENTS")
    def lock_parents(self, parent_ids):
        """In the caller's transaction: lock the hot rows of ``parent_ids``, flag those not yet
        terminal ``has_dependents`` and return ``{parent id: state}`` (a missing id is absent).
        A parent locked here cannot end before the enqueue commits, and its end then sees the
        edge: the enqueue and the parent's release are ordered by the parent's row lock."""
        db_ids = [self.db_uuid(parent_id) for parent_id in parent_ids]
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_LOCK_PARENTS.format(ids=placeholders(len(db_ids))), db_ids)
            states = {self.from_db_uuid(id_): state for id_, state in cursor.fetchall()}
            pending = [self.db_uuid(id_) for id_, state in states.items() if state not in TERMINAL]
            if pending:
                cursor.execute(self.sql.SQL_FLAG_PARENTS.format(ids=placeholders(len(pending))), pending)
        return states

    @runs("SQL_RECORD_PARENTS", "SQL_INSERT_EDGE_HEAD", "SQL_EDGE_ROW")
    def record_parents(self, child_id, parent_ids, pending_ids, on_parent_failure):
        """In the caller's transaction, on the job ``child_id`` just inserted: its parents
        (``depends_on``, for ``parent_results``) and its policy; when ``pending_ids`` (parents
        not ended yet) is not empty the job turns ``waiting`` for that many parents and one edge
        per pending parent is inserted."""
        state = "waiting" if pending_ids else "available"
        depends_on = "[" + ", ".join(f'"{parent_id}"' for parent_id in parent_ids) + "]"
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_RECORD_PARENTS,
                           [state, len(pending_ids), on_parent_failure, depends_on, self.db_uuid(child_id)])
            if pending_ids:
                params = [value for parent_id in pending_ids
                          for value in (self.db_uuid(parent_id), self.db_uuid(child_id))]
                cursor.execute(self.sql.SQL_INSERT_EDGE_HEAD + ", ".join([self.sql.SQL_EDGE_ROW] * len(pending_ids)),
                               params)

    @runs("SQL_DEPENDENTS_OF", "SQL_CANCEL_WAITING", "SQL_RELEASE_WAITING", "SQL_FORGET_EDGES")
    def release_dependents(self, parent_ids):
        """The release step, in the caller's transaction, for parents that just turned terminal
        (ids of parents still running or available are ignored). Each waiting dependent of a
        parent that ``succeeded`` (or failed, when the dependent's ``on_parent_failure`` is
        "run") counts one parent less and turns ``available`` at zero; a dependent of a parent
        that ended ``dead`` or ``cancelled`` ends ``cancelled`` (policy "cancel"), and so do its
        own dependents, transitively. Edges of jobs no longer waiting are deleted. Batch members
        among the parents are counted (``count_batch_members``). Returns the ids of the
        dependents and batch callbacks that turned available or cancelled."""
        if not parent_ids:
            return set()
        callbacks = self.count_batch_members(parent_ids)  # batches: store/contract/batches.py
        db_ids = [self.db_uuid(parent_id) for parent_id in parent_ids]
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_DEPENDENTS_OF.format(ids=placeholders(len(db_ids))), db_ids)
            rows = cursor.fetchall()
        if not rows:
            return callbacks
        failed, counts = set(), Counter()
        for child_id, parent_state, policy in rows:
            child_id = self.from_db_uuid(child_id)
            if parent_state != "succeeded" and policy != "run":
                failed.add(child_id)
            else:
                counts[child_id] += 1
        by_count = defaultdict(list)
        for child_id, count in counts.items():
            if child_id not in failed:
                by_count[count].append(self.db_uuid(child_id))
        cancelled = []
        with self.cursor() as cursor:
            for child_id in sorted(failed):
                cursor.execute(self.sql.SQL_CANCEL_WAITING, [self.db_uuid(child_id)])
                if cursor.rowcount:
                    cancelled.append(child_id)
            for count, children in sorted(by_count.items()):
                cursor.execute(self.sql.SQL_RELEASE_WAITING.format(ids=placeholders(len(children))),
                               [count, count, *children])
        self.forget_edges([*failed, *counts])
        if cancelled:
            callbacks |= self.release_dependents(cancelled)
        return {*failed, *counts, *callbacks}

    @runs("SQL_COMPLETE_FENCED")
    def complete_in_transaction(self, job_id, fence, result_json):
        """In the caller's transaction (the task's own, ``current_job().atomic()``): the job
        succeeds with ``result_json`` (fenced), and its release step runs. Raises StaleLease
        when the fence moved or the job no longer runs; the caller then rolls back."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_COMPLETE_FENCED, [result_json, self.db_uuid(job_id), fence])
            self.fenced(cursor, job_id, fence)
        self.release_dependents([job_id])

    @runs("SQL_CLAIM_BY_ID", "SQL_READ_CLAIMED")
    def claim_job_by_id(self, job_id, worker_id, lease_seconds):
        """Lease the ``available`` job ``job_id`` now, due or not (``django_headgate.testing``'s
        ``run_job``): as a claim, ``fence + 1``, ``attempts + 1``. Returns its ClaimedJob, or None
        when the job is not available."""
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(self.sql.SQL_CLAIM_BY_ID, [worker_id, self.duration_param(lease_seconds),
                                                      self.db_uuid(job_id)])
            if cursor.rowcount != 1:
                return None
            cursor.execute(self.sql.SQL_READ_CLAIMED, [self.db_uuid(job_id)])
            row = cursor.fetchone()
        return ClaimedJob.from_row((self.from_db_uuid(row[0]), *row[1:]))

    def forget_edges(self, child_ids):
        """Delete the edges of those of ``child_ids`` that no longer wait (caller's transaction)."""
        if not child_ids:
            return
        db_ids = [self.db_uuid(child_id) for child_id in child_ids]
        ids = placeholders(len(db_ids))
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_FORGET_EDGES.format(ids=ids), [*db_ids, *db_ids])

    @runs("SQL_DEPENDS_ON", "SQL_PARENT_RESULTS")
    def parent_results(self, job_id):
        """``{parent id: result}`` of the parents of ``job_id`` still in the hot table (an
        evicted parent is absent); ``{}`` for a job enqueued without ``depends_on``."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_DEPENDS_ON, [self.db_uuid(job_id)])
            row = cursor.fetchone()
            parent_ids = self.load_result(row[0]) if row else None
            if not parent_ids:
                return {}
            db_ids = [self.db_uuid(parent_id) for parent_id in parent_ids]
            cursor.execute(self.sql.SQL_PARENT_RESULTS.format(ids=placeholders(len(db_ids))), db_ids)
            return {self.from_db_uuid(id_): self.load_result(result) for id_, result in cursor.fetchall()}

    def load_result(self, value):
        """A JSON column value as read through Django's cursor (text on every vendor) -> Python."""
        return json.loads(value) if value is not None else None
