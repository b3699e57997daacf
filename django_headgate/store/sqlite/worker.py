"""SQLite store, worker section: acknowledge a batch in one fenced statement and claim in the
same transaction, renew a batch of leases in one statement, fence reads, release without
spending the attempt."""

from ..fragments import FENCED, SNOOZE, SQL_READ_FENCES, SQL_RELEASE  # noqa: F401  (statements of this vendor)
from .jobs import EXPIRES_NOW, NOW, NOW_PLUS

# Acknowledge many jobs in one fenced statement (row values; primary key); each row says
# whether other jobs depend on it (their release follows in the same transaction). {result} is NULL or
# a CASE id WHEN ... THEN ... END of their results; {pairs} is one (%s, %s) per job.
SQL_COMPLETE_MANY = f"""
UPDATE headgate_job
SET state = 'succeeded', result = {{result}}, finished_at = {NOW}, expires_at = {EXPIRES_NOW},
    lease_owner = NULL, lease_expires_at = NULL
WHERE state = 'running' AND (id, fence) IN (VALUES {{pairs}})
RETURNING id, has_dependents
"""
# Renew many leases in one fenced statement (row values; primary key), returning each renewed
# row's abort_requested_at (an IS NOT NULL in RETURNING is evaluated wrongly by SQLite 3.40);
# {pairs} is one (%s, %s) per lease.
SQL_RENEW_MANY = f"""
UPDATE headgate_job SET lease_expires_at = {NOW_PLUS}
WHERE state = 'running' AND lease_owner = %s AND (id, fence) IN (VALUES {{pairs}})
RETURNING id, abort_requested_at
"""
# Snooze one job (fenced): available again after a bound strftime modifier, attempt not spent.
SQL_SNOOZE = SNOOZE.format(run_at=NOW_PLUS, fenced=FENCED)


class SQLiteWorker:
    def acknowledge_and_claim(self, completions, worker_id, queues, limit, lease_seconds):
        with self.atomic():
            accepted = self._complete_many(completions) if completions else set()
            claimed = self.claim_jobs(worker_id, queues, limit, lease_seconds) if limit > 0 else []
        return accepted, claimed

    def _complete_many(self, completions):
        with_result = [(self.db_uuid(c.job_id), c.result_json) for c in completions if c.result_json is not None]
        if with_result:
            result = "CASE id " + " ".join(["WHEN %s THEN %s"] * len(with_result)) + " END"
        else:
            result = "NULL"
        params = [value for pair in with_result for value in pair]
        for c in completions:
            params += [self.db_uuid(c.job_id), c.fence]
        sql = SQL_COMPLETE_MANY.format(result=result, pairs=", ".join(["(%s, %s)"] * len(completions)))
        with self.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        self.release_dependents([self.from_db_uuid(id_) for id_, has_dependents in rows if has_dependents])
        return {self.from_db_uuid(row[0]) for row in rows}

    def renew_unlocked_leases(self, worker_id, leases, lease_seconds):
        if not leases:
            return {}
        params = [self.duration_param(lease_seconds), worker_id]
        for job_id, fence in leases:
            params += [self.db_uuid(job_id), fence]
        with self.cursor() as cursor:
            cursor.execute(SQL_RENEW_MANY.format(pairs=", ".join(["(%s, %s)"] * len(leases))), params)
            return {self.from_db_uuid(id_): requested_at is not None for id_, requested_at in cursor.fetchall()}
