"""PostgreSQL store, jobs section: statements and methods for enqueue (COPY for batches, NOTIFY
on commit), claim (CTE + SKIP LOCKED), fenced writes, failure and rescue (the acknowledgement is
in ``worker.py``, with the next claim)."""

from datetime import timedelta

from django.db import IntegrityError

from ..fragments import (
    CANCEL, CANCEL_ABORTED, CLAIM_ORDER, CLAIMED_COLUMNS, EXHAUSTED, FENCED, FENCED_UNLOCKED, INSERT_JOB_ROW,
    JOB_COLUMNS, READY, REQUEST_ABORT, RESCUE_SELECT, RETRY, RUNNING, SET_PROGRESS, SETTLE_ATTEMPT, state_is,
)
from ..fragments import SQL_MARK_UNIQUE_UNTIL_FINISHED, SQL_RELEASE_UNIQUE_KEY  # noqa: F401  (unique_until)
from ..records import AllQueuesExcept, ClaimedJob

NOW = "now()"
NOTIFY_CHANNEL = "headgate_jobs"
# A bound number of seconds after the store clock.
NOW_PLUS_SECONDS = "now() + make_interval(secs => {seconds})"
# The expires_at of a job turning terminal now: finished_at + its class duration (NULL = forever).
EXPIRES_NOW = (
    "now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = {job}.retention_class)"
)
# The errors list with one more entry ({error}: JSON text), stamped with the store clock.
APPEND_ERROR = "errors || jsonb_build_array({error}::jsonb || jsonb_build_object('at', now()))"

# Store clock.
SQL_NOW = f"SELECT {NOW}"

# Insert one job; NOTIFY is queued in the same transaction, so it fires only on commit.
SQL_INSERT_JOB = f"""
WITH inserted AS (
    INSERT INTO headgate_job ({JOB_COLUMNS})
    VALUES {INSERT_JOB_ROW.format(now=NOW, delay=NOW_PLUS_SECONDS.format(seconds="%s"))}
    ON CONFLICT (unique_key) DO NOTHING
    RETURNING created_at, run_at, queue
)
SELECT created_at, run_at, pg_notify('{NOTIFY_CHANNEL}', queue) FROM inserted
"""

# Bulk insert (enqueue_many) by COPY, the fastest path into PostgreSQL. COPY cannot evaluate
# now(), so the batch first reads the transaction's now() (SQL_NOW: the very value an INSERT's
# now() would give in this transaction) and rows carry it: still the store clock.
SQL_COPY_JOBS = f"COPY headgate_job ({JOB_COLUMNS}) FROM STDIN"
# Wake idle workers once for a COPY batch (delivered on commit).
SQL_NOTIFY = f"SELECT pg_notify('{NOTIFY_CHANNEL}', '')"

SQL_CANCEL = CANCEL.format(now=NOW, expires_now=EXPIRES_NOW.format(job="headgate_job"), returning="RETURNING state")
SQL_RETRY = RETRY.format(now=NOW, greatest="GREATEST", returning="RETURNING state")
SQL_REQUEST_ABORT = REQUEST_ABORT.format(now=NOW, returning="RETURNING state")
# An attempt whose abort was requested ends cancelled (fenced; a row someone else holds is skipped).
SQL_CANCEL_ABORTED = CANCEL_ABORTED.format(now=NOW, expires_now=EXPIRES_NOW.format(job="headgate_job"),
                                           fenced=FENCED_UNLOCKED)

# Claim: lock ready rows without waiting on other workers' locks (claim index), lease them,
# and return them in claim order (UPDATE ... RETURNING alone has no order).
# The two CTEs of a claim (`picked` then `claimed`), shared with the worker's ack-and-claim;
# ``limit``: the SQL of the number of rows to pick. The lease is set by LEASE_SET.
LEASE_SET = ("state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, "
             f"lease_expires_at = {NOW_PLUS_SECONDS.format(seconds='%s')}, started_at = now()")
CLAIMED_RETURNING = ", ".join(f"j.{column}" for column in CLAIMED_COLUMNS.split(", "))


def claim_ctes(limit="%s"):
    return f"""picked AS (
    SELECT id, priority, run_at FROM headgate_job
    WHERE {READY.format(now=NOW)} {{queue_filter}}
    {CLAIM_ORDER}
    LIMIT {limit}
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE headgate_job AS j
    SET {LEASE_SET}
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
    RETURNING {CLAIMED_RETURNING}
)"""


# Claim: the two CTEs, rows returned in claim order; {queue_filter}: see the two below.
SQL_CLAIM = f"""
WITH {claim_ctes()}
SELECT claimed.* FROM claimed JOIN picked USING (id) {CLAIM_ORDER}
"""
# Claim from every queue.
SQL_CLAIM_ANY_QUEUE = SQL_CLAIM.format(queue_filter="")
# Claim from the queues of one array parameter.
SQL_CLAIM_QUEUES = SQL_CLAIM.format(queue_filter="AND queue = ANY(%s)")
# Claim from every queue but those of one array parameter (paused or claimed under controls).
SQL_CLAIM_EXCEPT_QUEUES = SQL_CLAIM.format(queue_filter="AND queue <> ALL(%s)")

# When a failed attempt is the last: give_up, or attempts exhausted.
DEAD_IF = f"(%(give_up)s OR {EXHAUSTED})"
# Fenced failure: retry after a delay, or dead when attempts are exhausted (or give_up); a row
# someone else holds is skipped, never waited for.
SQL_FAIL = f"""
UPDATE headgate_job
SET {SETTLE_ATTEMPT.format(
    append_error=APPEND_ERROR.format(error="%(error)s"), dead_if=DEAD_IF, dead_run_at="run_at",
    retry_at=NOW_PLUS_SECONDS.format(seconds="%(delay)s"), now=NOW,
    expires_now=EXPIRES_NOW.format(job="headgate_job"))}
WHERE id = (SELECT id FROM headgate_job WHERE id = %(id)s AND fence = %(fence)s AND {RUNNING}
            FOR UPDATE SKIP LOCKED)
RETURNING state
"""

# Fenced progress and output writes.
SQL_SET_PROGRESS = SET_PROGRESS.format(value="%s::jsonb")
# Append to the job's output, keeping the last %s characters (fenced).
SQL_APPEND_OUTPUT = f"UPDATE headgate_job SET output = right(coalesce(output, '') || %s, %s) WHERE {FENCED}"

# Rescue: lock lapsed leases (skipping rows another maintainer holds), then release them all
# in one statement, each with its LeaseExpired entry.
SQL_RESCUE_SELECT = RESCUE_SELECT.format(now=NOW, lock="FOR UPDATE SKIP LOCKED")
# Rescue step 2: release every locked lapsed row in one statement (unnest).
SQL_RESCUE_RELEASE_BATCH = f"""
UPDATE headgate_job
SET {SETTLE_ATTEMPT.format(
    append_error=APPEND_ERROR.format(error="rescued.error"), dead_if=EXHAUSTED, dead_run_at=NOW,
    retry_at=NOW, now=NOW, expires_now=EXPIRES_NOW.format(job="headgate_job"))}
FROM unnest(%s::uuid[], %s::text[]) AS rescued(id, error)
WHERE headgate_job.id = rescued.id AND {state_is('running', of='headgate_job.state')}
"""


class PostgreSQLJobs:
    def insert_job(self, job):
        # The contract's insert, on the prepared path (hot.py).
        try:
            row = next(iter(self.hot_fetchall(SQL_INSERT_JOB, self.job_params(job))), None)
        except IntegrityError as exc:
            raise self.job_id_conflict(exc, job.id) from exc
        return None if row is None else (row[0], row[1])

    def insert_jobs(self, jobs):
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(SQL_NOW, [])
            now = cursor.fetchone()[0]
            try:
                # The driver's COPY bypasses Django's cursor wrapper: map its errors here.
                with self.connection.wrap_database_errors, cursor.cursor.copy(SQL_COPY_JOBS) as copy:
                    for job in jobs:
                        run_at = job.run_at if job.run_at is not None else now + timedelta(seconds=job.delay_seconds)
                        copy.write_row((
                            job.id, job.queue, job.task, job.args_json, job.kwargs_json, job.priority,
                            "available", run_at, 0, job.max_attempts, 0, None, job.fingerprint, "[]",
                            job.tags_json, job.retention_class, now, job.timeout,
                        ))
            except IntegrityError as exc:
                raise self.job_id_conflict(exc) from exc
            cursor.execute(SQL_NOTIFY, [])

    def claim_jobs(self, worker_id, queues, limit, lease_seconds):
        if queues:
            sql = SQL_CLAIM_EXCEPT_QUEUES if isinstance(queues, AllQueuesExcept) else SQL_CLAIM_QUEUES
            rows = self.hot_fetchall(sql, [list(queues), limit, worker_id, lease_seconds])
        else:
            rows = self.hot_fetchall(SQL_CLAIM_ANY_QUEUE, [limit, worker_id, lease_seconds])
        return [ClaimedJob.from_row(row) for row in rows]

    def fail_job(self, job_id, fence, error_json, retry_delay_seconds, give_up=False):
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(SQL_FAIL, {
                "give_up": give_up, "delay": retry_delay_seconds, "error": error_json,
                "id": job_id, "fence": fence,
            })
            self.fenced(cursor, job_id, fence)
            state = cursor.fetchone()[0]
            if state == "dead":
                self.release_dependents([job_id])
            return state

    def release_rescued(self, cursor, released):
        ids, errors = zip(*released)
        cursor.execute(SQL_RESCUE_RELEASE_BATCH, [[str(i) for i in ids], list(errors)])
