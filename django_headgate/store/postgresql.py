"""PostgreSQL store: SKIP LOCKED claims, batched fenced acknowledgements, LISTEN/NOTIFY, advisory locks."""

import logging
from contextlib import contextmanager

import psycopg
from django.db import DatabaseError, IntegrityError, connections

from ..exceptions import JobIdConflict
from .base import BaseStore, ClaimedJob, lock_key

logger = logging.getLogger(__name__)

NOTIFY_CHANNEL = "headgate_jobs"

JOB_COLUMNS = (
    "id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts, fence, "
    "unique_key, fingerprint, errors, tags, retention_class, created_at"
)

# Store clock.
SQL_NOW = "SELECT now()"

# State of one job (primary key).
SQL_GET_STATE = "SELECT state FROM headgate_job WHERE id = %s"

# The expires_at of a job turning terminal now: finished_at + its class duration (NULL = forever).
EXPIRES_NOW = (
    "now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = {job}.retention_class)"
)

# Insert one job; NOTIFY is queued in the same transaction, so it fires only on commit.
SQL_INSERT_JOB = f"""
WITH inserted AS (
    INSERT INTO headgate_job ({JOB_COLUMNS})
    VALUES (%s, %s, %s, %s, %s, %s, 'available', COALESCE(%s, now() + make_interval(secs => %s)),
            0, %s, 0, %s, %s, '[]', %s, %s, now())
    ON CONFLICT (unique_key) DO NOTHING
    RETURNING created_at, run_at, queue
)
SELECT created_at, run_at, pg_notify('{NOTIFY_CHANNEL}', queue) FROM inserted
"""

# One row of a multi-row insert (enqueue_many); the statement is built from a row count only.
SQL_INSERT_JOBS_HEAD = f"INSERT INTO headgate_job ({JOB_COLUMNS}) VALUES "
SQL_INSERT_JOBS_ROW = (
    "(%s, %s, %s, %s, %s, %s, 'available', COALESCE(%s, now() + make_interval(secs => %s)), "
    "0, %s, 0, NULL, %s, '[]', %s, %s, now())"
)
SQL_NOTIFY = f"SELECT pg_notify('{NOTIFY_CHANNEL}', '')"
SQL_LISTEN = f"LISTEN {NOTIFY_CHANNEL}"

# Operator cancel: available/running -> cancelled; a running worker's later writes are rejected.
SQL_CANCEL = f"""
UPDATE headgate_job AS j
SET state = 'cancelled', finished_at = now(), expires_at = {EXPIRES_NOW.format(job="j")},
    lease_owner = NULL, lease_expires_at = NULL
WHERE j.id = %s AND j.state IN ('available', 'running')
RETURNING j.state
"""

# Operator retry: dead/cancelled -> available now; one more attempt when they were exhausted.
SQL_RETRY = """
UPDATE headgate_job
SET state = 'available', run_at = now(), max_attempts = GREATEST(max_attempts, attempts + 1),
    finished_at = NULL, expires_at = NULL, result = NULL
WHERE id = %s AND state IN ('dead', 'cancelled')
RETURNING state
"""

# Claim: lock ready rows without waiting on other workers' locks (claim index), lease them.
SQL_CLAIM = """
WITH picked AS (
    SELECT id FROM headgate_job
    WHERE state = 'available' AND run_at <= now() {queue_filter}
    ORDER BY priority DESC, run_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
)
UPDATE headgate_job AS j
SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s,
    lease_expires_at = now() + make_interval(secs => %s), started_at = now()
FROM picked
WHERE j.id = picked.id
RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence
"""
SQL_CLAIM_ANY_QUEUE = SQL_CLAIM.format(queue_filter="")
SQL_CLAIM_QUEUES = SQL_CLAIM.format(queue_filter="AND queue = ANY(%s)")

# Renew the leases still held by this worker; unchanged rows were rescued or re-claimed.
SQL_RENEW = """
UPDATE headgate_job AS j
SET lease_expires_at = now() + make_interval(secs => %s)
FROM unnest(%s::uuid[], %s::bigint[]) AS held(id, fence)
WHERE j.id = held.id AND j.fence = held.fence AND j.state = 'running' AND j.lease_owner = %s
RETURNING j.id
"""

# Fenced batch acknowledgement: only rows still at the claimed fence and running change.
SQL_COMPLETE = f"""
UPDATE headgate_job AS j
SET state = 'succeeded', result = done.result::jsonb, finished_at = now(),
    expires_at = {EXPIRES_NOW.format(job="j")}, lease_owner = NULL, lease_expires_at = NULL
FROM unnest(%s::uuid[], %s::bigint[], %s::text[]) AS done(id, fence, result)
WHERE j.id = done.id AND j.fence = done.fence AND j.state = 'running'
RETURNING j.id
"""

# Fenced failure: retry after a delay, or dead when attempts are exhausted (or give_up).
SQL_FAIL = f"""
UPDATE headgate_job AS j
SET state = CASE WHEN %(give_up)s OR j.attempts >= j.max_attempts THEN 'dead' ELSE 'available' END,
    run_at = CASE WHEN %(give_up)s OR j.attempts >= j.max_attempts THEN j.run_at
             ELSE now() + make_interval(secs => %(delay)s) END,
    finished_at = CASE WHEN %(give_up)s OR j.attempts >= j.max_attempts THEN now() END,
    expires_at = CASE WHEN %(give_up)s OR j.attempts >= j.max_attempts
                 THEN {EXPIRES_NOW.format(job="j")} END,
    errors = j.errors || jsonb_build_array(%(error)s::jsonb || jsonb_build_object('at', now())),
    lease_owner = NULL, lease_expires_at = NULL
WHERE j.id = %(id)s AND j.fence = %(fence)s AND j.state = 'running'
RETURNING j.state
"""

# Fenced progress and output writes.
SQL_SET_PROGRESS = (
    "UPDATE headgate_job SET progress = %s::jsonb WHERE id = %s AND fence = %s AND state = 'running'"
)
SQL_APPEND_OUTPUT = (
    "UPDATE headgate_job SET output = right(coalesce(output, '') || %s, %s) "
    "WHERE id = %s AND fence = %s AND state = 'running'"
)

# Rescue expired leases, oldest first, skipping rows another maintainer holds.
SQL_RESCUE = f"""
WITH expired AS (
    SELECT id FROM headgate_job
    WHERE state = 'running' AND lease_expires_at < now()
    ORDER BY lease_expires_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
)
UPDATE headgate_job AS j
SET state = CASE WHEN j.attempts >= j.max_attempts THEN 'dead' ELSE 'available' END,
    run_at = now(),
    finished_at = CASE WHEN j.attempts >= j.max_attempts THEN now() END,
    expires_at = CASE WHEN j.attempts >= j.max_attempts THEN {EXPIRES_NOW.format(job="j")} END,
    errors = j.errors || jsonb_build_array(jsonb_build_object(
        'attempt', j.attempts, 'at', now(), 'type', 'LeaseExpired',
        'message', 'lease of ' || coalesce(j.lease_owner, '?') || ' expired', 'traceback', '')),
    lease_owner = NULL, lease_expires_at = NULL
FROM expired
WHERE j.id = expired.id
RETURNING j.id
"""

# Session-level advisory lock, taken without waiting.
SQL_TRY_LOCK = "SELECT pg_try_advisory_lock(%s)"
SQL_UNLOCK = "SELECT pg_advisory_unlock(%s)"

# Heartbeats: register (or take over) and renew by (worker_id, instance_id).
SQL_REGISTER_HEARTBEAT = """
INSERT INTO headgate_worker_heartbeat
    (worker_id, instance_id, hostname, pid, queues, started_at, last_heartbeat_at)
VALUES (%s, %s, %s, %s, %s, now(), now())
ON CONFLICT (worker_id) DO UPDATE SET
    instance_id = EXCLUDED.instance_id, hostname = EXCLUDED.hostname, pid = EXCLUDED.pid,
    queues = EXCLUDED.queues, started_at = now(), last_heartbeat_at = now()
"""
SQL_RENEW_HEARTBEAT = (
    "UPDATE headgate_worker_heartbeat SET last_heartbeat_at = now() "
    "WHERE worker_id = %s AND instance_id = %s"
)
SQL_DELETE_HEARTBEAT = "DELETE FROM headgate_worker_heartbeat WHERE worker_id = %s AND instance_id = %s"

# -- heartbeat prune --
# Stale heartbeat rows, oldest first (headgate_heartbeat_last_idx), skipping rows a renewal
# holds, at most LIMIT; {exclude_own} is empty or EXCLUDE_OWN_HEARTBEAT (the caller's own row).
SQL_PRUNE_HEARTBEATS = """
WITH doomed AS (
    SELECT worker_id FROM headgate_worker_heartbeat
    WHERE last_heartbeat_at < now() - make_interval(secs => %s) {exclude_own}
    ORDER BY last_heartbeat_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM headgate_worker_heartbeat AS h USING doomed WHERE h.worker_id = doomed.worker_id
"""
EXCLUDE_OWN_HEARTBEAT = "AND NOT (worker_id = %s AND instance_id = %s)"
SQL_PRUNE_HEARTBEATS_ALL = SQL_PRUNE_HEARTBEATS.format(exclude_own="")
SQL_PRUNE_HEARTBEATS_NOT_OWN = SQL_PRUNE_HEARTBEATS.format(exclude_own=EXCLUDE_OWN_HEARTBEAT)
# Time budget of the current transaction only (set_config(..., true) = SET LOCAL; it also works
# with server-side parameter binding, where SET takes no parameters). Milliseconds.
SQL_SET_LOCAL_TIMEOUTS = (
    "SELECT set_config('statement_timeout', %s, true), set_config('lock_timeout', %s, true)"
)

INSERT_BATCH_ROWS = 1000


class PostgreSQLStore(BaseStore):
    vendor = "postgresql"
    supports_skip_locked = True
    supports_listen_notify = True
    supports_cluster_locks = True

    SQL_NOW = SQL_NOW
    SQL_GET_STATE = SQL_GET_STATE
    SQL_SET_PROGRESS = SQL_SET_PROGRESS
    SQL_APPEND_OUTPUT = SQL_APPEND_OUTPUT
    SQL_RENEW_HEARTBEAT = SQL_RENEW_HEARTBEAT
    SQL_DELETE_HEARTBEAT = SQL_DELETE_HEARTBEAT
    notify_channel = NOTIFY_CHANNEL

    def _job_params(self, job):
        return [
            job.id, job.queue, job.task, job.args_json, job.kwargs_json, job.priority,
            job.run_at, job.delay_seconds, job.max_attempts,
        ]

    def insert_job(self, job):
        params = self._job_params(job) + [
            job.unique_key, job.fingerprint, job.tags_json, job.retention_class,
        ]
        try:
            with self.cursor() as cursor:
                cursor.execute(SQL_INSERT_JOB, params)
                row = cursor.fetchone()
        except IntegrityError as exc:
            raise JobIdConflict(f"A job with id {job.id} already exists.", job_id=job.id) from exc
        return (row[0], row[1]) if row else None

    def insert_jobs(self, jobs):
        with self.atomic(), self.cursor() as cursor:
            for start in range(0, len(jobs), INSERT_BATCH_ROWS):
                chunk = jobs[start:start + INSERT_BATCH_ROWS]
                params = []
                for job in chunk:
                    params += self._job_params(job)
                    params += [job.fingerprint, job.tags_json, job.retention_class]
                sql = SQL_INSERT_JOBS_HEAD + ", ".join([SQL_INSERT_JOBS_ROW] * len(chunk))
                try:
                    cursor.execute(sql, params)
                except IntegrityError as exc:
                    raise JobIdConflict("A job id in the batch already exists.") from exc
            cursor.execute(SQL_NOTIFY)

    def cancel_job(self, job_id):
        return self._fetch_state(SQL_CANCEL, [job_id])

    def retry_job(self, job_id):
        return self._fetch_state(SQL_RETRY, [job_id])

    def _fetch_state(self, sql, params):
        with self.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
        return row[0] if row else None

    def claim_jobs(self, worker_id, queues, limit, lease_seconds):
        with self.cursor() as cursor:
            if queues:
                cursor.execute(SQL_CLAIM_QUEUES, [list(queues), limit, worker_id, lease_seconds])
            else:
                cursor.execute(SQL_CLAIM_ANY_QUEUE, [limit, worker_id, lease_seconds])
            rows = cursor.fetchall()
        return [ClaimedJob(*row) for row in rows]

    def renew_leases(self, worker_id, leases, lease_seconds):
        if not leases:
            return set()
        ids, fences = zip(*leases)
        with self.cursor() as cursor:
            cursor.execute(SQL_RENEW, [lease_seconds, [str(i) for i in ids], list(fences), worker_id])
            return {row[0] for row in cursor.fetchall()}

    def complete_jobs(self, completions):
        if not completions:
            return set()
        with self.cursor() as cursor:
            cursor.execute(SQL_COMPLETE, [
                [str(c.job_id) for c in completions],
                [c.fence for c in completions],
                [c.result_json for c in completions],
            ])
            return {row[0] for row in cursor.fetchall()}

    def fail_job(self, job_id, fence, error_json, retry_delay_seconds, give_up=False):
        with self.cursor() as cursor:
            cursor.execute(SQL_FAIL, {
                "give_up": give_up, "delay": retry_delay_seconds, "error": error_json,
                "id": job_id, "fence": fence,
            })
            self.fenced(cursor, job_id, fence)
            return cursor.fetchone()[0]

    def rescue_expired(self, limit):
        with self.cursor() as cursor:
            cursor.execute(SQL_RESCUE, [limit])
            return cursor.rowcount

    @contextmanager
    def singleton_lock(self, name):
        key = lock_key(name)
        with self.cursor() as cursor:
            cursor.execute(SQL_TRY_LOCK, [key])
            taken = cursor.fetchone()[0]
        try:
            yield taken
        finally:
            if taken:
                with self.cursor() as cursor:
                    cursor.execute(SQL_UNLOCK, [key])

    def register_heartbeat(self, worker_id, instance_id, hostname, pid, queues_json):
        with self.cursor() as cursor:
            cursor.execute(SQL_REGISTER_HEARTBEAT, [worker_id, instance_id, hostname, pid, queues_json])

    # -- heartbeat prune --

    def prune_heartbeats(self, retention_seconds, limit, exclude=None, timeout_seconds=5.0):
        budget_ms = str(max(1, round(timeout_seconds * 1000)))
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(SQL_SET_LOCAL_TIMEOUTS, [budget_ms, budget_ms])
            if exclude is None:
                cursor.execute(SQL_PRUNE_HEARTBEATS_ALL, [retention_seconds, limit])
            else:
                worker_id, instance_id = exclude
                cursor.execute(SQL_PRUNE_HEARTBEATS_NOT_OWN,
                               [retention_seconds, worker_id, self.db_uuid(instance_id), limit])
            return cursor.rowcount

    def listen_for_jobs(self, wake, stop, timeout=0.2):
        """Blocking loop for a listener thread: LISTEN, then set ``wake`` on every NOTIFY until
        ``stop`` is set. Uses this thread's own connection (autocommit, so LISTEN applies now)."""
        connection = connections[self.alias]
        try:
            while not stop.is_set():
                try:
                    connection.ensure_connection()
                    raw = connection.connection
                    raw.execute(SQL_LISTEN)
                    while not stop.is_set():
                        for _ in raw.notifies(timeout=timeout, stop_after=1):
                            wake.set()
                except (DatabaseError, psycopg.Error):
                    logger.warning("LISTEN connection lost; reconnecting.", extra={"action": "listen_error"})
                    connection.close()
                    stop.wait(timeout)
        finally:
            connection.close()
