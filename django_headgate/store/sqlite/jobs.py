"""SQLite store, jobs section: enqueue, claim (one ``UPDATE ... RETURNING``; the single writer
makes it atomic), fenced writes and rescue."""

from ..fragments import (  # noqa: F401  (SQL_GET_STATE: a statement of this vendor)
    CANCEL, CANCEL_ABORTED, CLAIM_ORDER, CLAIMED_COLUMNS, FENCED,
    INSERT_JOB_ROW, INSERT_JOBS_HEAD, READY, REQUEST_ABORT, RESCUE_SELECT, RETRY, SET_PROGRESS,
    SQL_GET_STATE, fail_statement,
    rescue_release_statement,
)
from ..fragments import SQL_MARK_UNIQUE_UNTIL_FINISHED, SQL_RELEASE_UNIQUE_KEY  # noqa: F401  (unique_until)
from ..flow_fragments import claim_queue_filter
from ..records import ClaimedJob

# '%%' because every statement runs with a parameter list: Django's SQLite cursor then turns '%%'
# into '%', and its DEBUG query log formats ``sql % params`` (a bare '%Y' would raise there).
NOW = "strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now')"
# now + a bound modifier such as '+2.500 seconds' (see SQLiteStore.duration_param)
NOW_PLUS = "strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now', %s)"
# The expires_at of a job turning terminal now (durations are integer microseconds; NULL =
# forever makes the modifier NULL and so the result NULL).
EXPIRES_NOW = (
    "strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now', "
    "(SELECT '+' || (rc.duration / 1000000.0) || ' seconds' FROM headgate_retention_class rc "
    "WHERE rc.\"key\" = headgate_job.retention_class))"
)
# An errors entry ({error}: JSON) stamped with the store clock, appended to the JSON list.
APPEND_ERROR = f"json_insert(errors, '$[#]', json_set({{error}}, '$.at', {NOW}))"

# Store clock.
SQL_NOW = f"SELECT {NOW}"

SQL_INSERT_JOB_ROW = INSERT_JOB_ROW.format(now=NOW, delay=NOW_PLUS)
SQL_INSERT_JOBS_HEAD = INSERT_JOBS_HEAD
# Insert one job; a unique_key already held by a hot row inserts nothing.
SQL_INSERT_JOB = (
    SQL_INSERT_JOBS_HEAD + SQL_INSERT_JOB_ROW + " ON CONFLICT (unique_key) DO NOTHING RETURNING created_at, run_at"
)

SQL_CANCEL = CANCEL.format(now=NOW, expires_now=EXPIRES_NOW, returning="RETURNING state")
SQL_RETRY = RETRY.format(now=NOW, greatest="max", returning="RETURNING state")
SQL_REQUEST_ABORT = REQUEST_ABORT.format(now=NOW, returning="RETURNING state")
SQL_CANCEL_ABORTED = CANCEL_ABORTED.format(now=NOW, expires_now=EXPIRES_NOW, fenced=FENCED)

# Claim in one statement; SQLite's single writer makes the subquery + update atomic. RETURNING
# has no order: priority and run_at come back so that the claim order can be restored.
SQL_CLAIM = f"""
UPDATE headgate_job
SET state = 'running', attempts = attempts + 1, fence = fence + 1, lease_owner = %s,
    lease_expires_at = {NOW_PLUS}, started_at = {NOW}
WHERE id IN (
    SELECT id FROM headgate_job
    WHERE {READY.format(now=NOW)} {{queue_filter}}
    {CLAIM_ORDER}
    LIMIT %s
)
RETURNING {CLAIMED_COLUMNS}, priority, run_at
"""
# Fenced failure: retry after a delay, or dead when attempts are exhausted (or give_up).
SQL_FAIL = fail_statement(NOW, EXPIRES_NOW, APPEND_ERROR, NOW_PLUS)
SQL_SET_PROGRESS = SET_PROGRESS.format(value="%s")
# Append to the job's output, keeping the last %s characters (fenced).
SQL_APPEND_OUTPUT = f"UPDATE headgate_job SET output = substr(coalesce(output, '') || %s, -%s) WHERE {FENCED}"

# Rescue: lapsed leases (the single writer stands in for SKIP LOCKED), released one by one.
SQL_RESCUE_SELECT = RESCUE_SELECT.format(now=NOW, lock="")
# Rescue step 2, one row: available again now, or dead when attempts are exhausted.
SQL_RESCUE_RELEASE = rescue_release_statement(NOW, EXPIRES_NOW, APPEND_ERROR)


class SQLiteJobs:
    def claim_jobs(self, worker_id, queues, limit, lease_seconds):
        if queues:
            sql = SQL_CLAIM.format(queue_filter=claim_queue_filter(queues))
            params = [worker_id, self.duration_param(lease_seconds), *queues, limit]
        else:
            sql = SQL_CLAIM.format(queue_filter="")
            params = [worker_id, self.duration_param(lease_seconds), limit]
        with self.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        # Highest priority first, then oldest run_at (one text format: it sorts as it reads).
        rows.sort(key=lambda row: (-row[-2], row[-1]))
        return [ClaimedJob.from_row((self.from_db_uuid(row[0]), *row[1:-2])) for row in rows]
