"""MySQL / MariaDB store, worker section: acknowledge and claim in one transaction, lock-free
acknowledgements, renewals, failures, snoozes and cancellations (one lock order, SKIP LOCKED),
fence reads, release without spending the attempt."""

import math

from ..fragments import FENCED, SNOOZE, SQL_READ_FENCES, SQL_RELEASE, placeholders  # noqa: F401  (statements of this vendor)
from ..flow_fragments import claim_queue_filter
from . import jobs as job_statements
from .jobs import EXPIRES_NOW, NOW, NOW_PLUS

# Acknowledgement step 1: lock the rows to acknowledge that are still running, in id order,
# skipping rows someone else holds, so it never waits; renewal takes the same order and also
# skips, so acknowledgement and renewal can never deadlock (fences are compared in Python).
# Renewal reads whether each row's abort was requested in the same step; an acknowledgement,
# whether other jobs depend on it (their release follows in the same transaction).
SQL_LOCK_RUNNING = """
SELECT id, fence, abort_requested_at, has_dependents FROM headgate_job
WHERE id IN ({ids}) AND (state = 'running') IS NOT FALSE {owner_filter}
ORDER BY id
FOR UPDATE SKIP LOCKED
"""
SQL_LOCK_RUNNING_ANY_OWNER = SQL_LOCK_RUNNING.replace("{owner_filter}", "")
SQL_LOCK_RUNNING_OWNED = SQL_LOCK_RUNNING.replace("{owner_filter}", "AND lease_owner = %s")
# Acknowledgement step 2 (same transaction): the locked rows succeed; {result} is NULL or a
# CASE id WHEN ... THEN ... END of their results.
SQL_COMPLETE_LOCKED = f"""
UPDATE headgate_job
SET state = 'succeeded', result = {{result}}, finished_at = {NOW}, expires_at = {EXPIRES_NOW},
    lease_owner = NULL, lease_expires_at = NULL
WHERE id IN ({{ids}})
"""
# Renewal step 2 (same transaction): extend the locked rows' leases.
SQL_RENEW_LOCKED = (
    f"UPDATE headgate_job SET lease_expires_at = {NOW_PLUS} WHERE id IN ({{ids}})"
)
# Snooze one job (fenced): available again after a bound duration, attempt not spent.
SQL_SNOOZE = SNOOZE.format(run_at=NOW_PLUS, fenced=FENCED)
# MariaDB: end the session when a transaction of it idles longer than %s seconds (DEFAULT: the
# server's, 0 = off). MySQL 8 has no such variable.
SQL_SET_IDLE_TRANSACTION_BOUND = "SET SESSION idle_transaction_timeout = %s"
# Undo SQL_SET_IDLE_TRANSACTION_BOUND.
SQL_RESET_IDLE_TRANSACTION_BOUND = "SET SESSION idle_transaction_timeout = DEFAULT"
# Before a failure, snooze or cancellation of one attempt (same transaction): lock its row by
# primary key, skipping it when someone else holds it, so that the write never waits for it (an
# UPDATE cannot select from its own table: MariaDB error 1093).
SQL_LOCK_FENCED = f"SELECT id FROM headgate_job WHERE {FENCED} FOR UPDATE SKIP LOCKED"


class MySQLWorker:
    def acknowledge_and_claim(self, completions, worker_id, queues, limit, lease_seconds):
        accepted, claimed = set(), []
        with self.atomic(), self.cursor() as cursor:
            if completions:
                accepted = self._complete_unlocked(cursor, completions)
            if limit > 0:  # both claim steps in this transaction, no savepoint
                if queues:
                    select = job_statements.SQL_CLAIM_SELECT.format(queue_filter=claim_queue_filter(queues))
                    params = [*queues, limit]
                else:
                    select, params = job_statements.SQL_CLAIM_SELECT.format(queue_filter=""), [limit]
                cursor.execute(select, params)
                rows = cursor.fetchall()
                if rows:
                    cursor.execute(job_statements.SQL_CLAIM_UPDATE.format(ids=placeholders(len(rows))),
                                   [worker_id, self.duration_param(lease_seconds), *(row[0] for row in rows)])
                claimed = self.claimed_from_select(rows)
        return accepted, claimed

    def _complete_unlocked(self, cursor, completions):
        by_id = {c.job_id: c for c in completions}
        db_ids = [self.db_uuid(job_id) for job_id in by_id]
        cursor.execute(SQL_LOCK_RUNNING_ANY_OWNER.format(ids=placeholders(len(db_ids))), db_ids)
        locked = [(db_id, self.from_db_uuid(db_id), fence, has_dependents)
                  for db_id, fence, _, has_dependents in cursor.fetchall()]
        ours = [(db_id, job_id) for db_id, job_id, fence, _ in locked if by_id[job_id].fence == fence]
        if not ours:
            return set()
        parents = [job_id for _, job_id, fence, has_dependents in locked
                   if has_dependents and by_id[job_id].fence == fence]
        for group in self._by_packet(ours, by_id):
            with_result = [(db_id, by_id[job_id].result_json) for db_id, job_id in group
                           if by_id[job_id].result_json is not None]
            if with_result:
                result = "CASE id " + " ".join(["WHEN %s THEN %s"] * len(with_result)) + " END"
            else:
                result = "NULL"
            params = [value for pair in with_result for value in pair]
            cursor.execute(SQL_COMPLETE_LOCKED.format(result=result, ids=placeholders(len(group))),
                           [*params, *(db_id for db_id, _ in group)])
        self.release_dependents(parents)
        return {job_id for _, job_id in ours}

    def _by_packet(self, ours, by_id):
        """``ours`` in groups whose results fit one statement under max_allowed_packet (escaping
        can double JSON text; a lone larger result is a group of its own): results of up to
        HEADGATE["MAX_RESULT_BYTES"] each never add up to a statement the server refuses. Most
        batches are one group."""
        group, size = [], 0
        for pair in ours:
            result_json = by_id[pair[1]].result_json
            row_bytes = 2 * len(result_json) + 64 if result_json is not None else 64
            if group and size + row_bytes > self.max_insert_bytes:
                yield group
                group, size = [], 0
            group.append(pair)
            size += row_bytes
        yield group

    def bound_idle_transactions(self, seconds):
        self.connection.ensure_connection()
        if not self.connection.mysql_is_mariadb:
            return
        with self.cursor() as cursor:
            if seconds is None:
                cursor.execute(SQL_RESET_IDLE_TRANSACTION_BOUND, [])
            else:
                cursor.execute(SQL_SET_IDLE_TRANSACTION_BOUND, [max(1, math.ceil(seconds))])

    def renew_unlocked_leases(self, worker_id, leases, lease_seconds):
        if not leases:
            return {}
        fences = dict(leases)
        db_ids = [self.db_uuid(job_id) for job_id in fences]
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(SQL_LOCK_RUNNING_OWNED.format(ids=placeholders(len(db_ids))), [*db_ids, worker_id])
            ours = [(db_id, self.from_db_uuid(db_id), requested_at is not None)
                    for db_id, fence, requested_at, _ in cursor.fetchall()
                    if fences.get(self.from_db_uuid(db_id)) == fence]
            if ours:
                cursor.execute(SQL_RENEW_LOCKED.format(ids=placeholders(len(ours))),
                               [self.duration_param(lease_seconds), *(db_id for db_id, _, _ in ours)])
        return {job_id: aborting for _, job_id, aborting in ours}

    # -- one attempt's write, never waiting for its row ---------------------------------------
    # The contract's statements, after SQL_LOCK_FENCED in the same transaction: a row someone
    # else holds changes nothing and raises StaleLease (the caller reads the fence to tell it
    # from a stale lease).

    def fail_job(self, job_id, fence, error_json, retry_delay_seconds, give_up=False):
        params = [error_json, give_up, self.duration_param(retry_delay_seconds), give_up, give_up,
                  give_up, self.db_uuid(job_id), fence]
        with self.atomic(), self.cursor() as cursor:
            self._lock_fenced(cursor, job_id, fence)
            cursor.execute(job_statements.SQL_FAIL, params)
            cursor.execute(job_statements.SQL_GET_STATE, [self.db_uuid(job_id)])
            state = cursor.fetchone()[0]
            if state == "dead":
                self.release_dependents([job_id])
            return state

    def snooze_job(self, job_id, fence, delay_seconds):
        with self.atomic(), self.cursor() as cursor:
            self._lock_fenced(cursor, job_id, fence)
            cursor.execute(SQL_SNOOZE, [self.duration_param(delay_seconds), self.db_uuid(job_id), fence])

    def cancel_aborted_job(self, job_id, fence):
        with self.atomic(), self.cursor() as cursor:
            self._lock_fenced(cursor, job_id, fence)
            cursor.execute(job_statements.SQL_CANCEL_ABORTED, [self.db_uuid(job_id), fence])
            self.fenced(cursor, job_id, fence)  # locked, but its abort request may be gone
            self.release_dependents([job_id])

    def _lock_fenced(self, cursor, job_id, fence):
        cursor.execute(SQL_LOCK_FENCED, [self.db_uuid(job_id), fence])
        if cursor.fetchone() is None:
            raise self.stale_lease(job_id, fence)
