"""Store contract, batches section (DESIGN §17): a batch row, its members, and the count of its
members' endings moved in the transactions that end them; the batch's callback jobs (inserted
``waiting`` when the batch block closes) are released once, by the transaction that ends its
last member (or by the close, when every member ended already).

``count_batch_members`` is part of the release step (``release_dependents`` calls it): batch
members are flagged ``has_dependents``, so jobs outside batches never run it.
"""

from ..fragments import placeholders
from . import runs


class BatchesContract:
    @runs("SQL_INSERT_BATCH")
    def insert_batch(self, batch_id):
        """Insert an open batch (no total yet) in the caller's transaction."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_INSERT_BATCH, [self.db_uuid(batch_id)])

    @runs("SQL_ADD_BATCH_MEMBERS")
    def add_batch_members(self, batch_id, job_ids, ended_ids=()):
        """Make the jobs ``job_ids`` (just enqueued, caller's transaction) members of the batch;
        ``ended_ids``, those among them already ended (a dependency decided at enqueue), are
        counted at once."""
        db_ids = [self.db_uuid(job_id) for job_id in job_ids]
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_ADD_BATCH_MEMBERS.format(ids=placeholders(len(db_ids))),
                           [self.db_uuid(batch_id), *db_ids])
        if ended_ids:
            self.count_batch_members(list(ended_ids))

    @runs("SQL_CLOSE_BATCH", "SQL_HOLD_CALLBACK")
    def close_batch(self, batch_id, total, callbacks):
        """Close the batch in the caller's transaction: its ``total`` and its callback jobs
        ``{"on_success"|"on_finish"|"on_dead": job id}``, which turn ``waiting`` until the batch
        ends (released here when every member ended already, or the batch is empty)."""
        with self.cursor() as cursor:
            for job_id in callbacks.values():
                cursor.execute(self.sql.SQL_HOLD_CALLBACK, [self.db_uuid(job_id)])
            cursor.execute(self.sql.SQL_CLOSE_BATCH, [
                total, *(self.db_uuid(callbacks[kind]) if kind in callbacks else None
                         for kind in ("on_success", "on_finish", "on_dead")),
                self.db_uuid(batch_id)])
        self.settle_batch(batch_id)

    @runs("SQL_BATCH_ENDINGS", "SQL_COUNT_BATCH_ENDINGS")
    def count_batch_members(self, job_ids):
        """Part of the release step: count the batch members among ``job_ids`` that are terminal
        by their end state, and settle each batch they belong to. Returns the ids of the
        callbacks released or cancelled."""
        db_ids = [self.db_uuid(job_id) for job_id in job_ids]
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_BATCH_ENDINGS.format(ids=placeholders(len(db_ids))), db_ids)
            counts = {}
            for batch_id, state, count in cursor.fetchall():
                counts.setdefault(batch_id, {"succeeded": 0, "dead": 0, "cancelled": 0})[state] = count
            for batch_id in sorted(counts, key=str):  # one lock order
                ended = counts[batch_id]
                cursor.execute(self.sql.SQL_COUNT_BATCH_ENDINGS,
                               [ended["succeeded"], ended["dead"], ended["cancelled"], batch_id])
        released = set()
        for batch_id in sorted(counts, key=str):
            released |= self.settle_batch(self.from_db_uuid(batch_id))
        return released

    @runs("SQL_READ_BATCH", "SQL_FINISH_BATCH")
    def settle_batch(self, batch_id):
        """When the closed batch's members all ended: mark it finished (once) and release its
        callbacks: ``on_finish`` always, ``on_success`` when none failed, ``on_dead`` when one
        ended dead; the others end ``cancelled``. Returns the ids of the callbacks it released
        or cancelled (empty unless the batch finished now)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_READ_BATCH, [self.db_uuid(batch_id)])
            row = cursor.fetchone()
            if row is None:
                return set()
            total, succeeded, dead, cancelled, on_success, on_finish, on_dead = row
            if total is None or succeeded + dead + cancelled < total:
                return set()
            cursor.execute(self.sql.SQL_FINISH_BATCH, [self.db_uuid(batch_id)])
            if cursor.rowcount != 1:
                return set()  # finished by an earlier transaction
            run = [on_finish, on_success if dead + cancelled == 0 else None, on_dead if dead else None]
            run = [job_id for job_id in run if job_id is not None]
            skip = [job_id for job_id in (on_success, on_dead) if job_id is not None and job_id not in run]
            if run:
                cursor.execute(self.sql.SQL_RELEASE_WAITING.format(ids=placeholders(len(run))), [1, 1, *run])
            for job_id in skip:
                cursor.execute(self.sql.SQL_CANCEL_WAITING, [job_id])
        return {self.from_db_uuid(job_id) for job_id in (*run, *skip)}
