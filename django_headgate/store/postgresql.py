"""PostgreSQL store: SKIP LOCKED claims, batched fenced acknowledgements, LISTEN/NOTIFY, advisory locks."""

import logging
from datetime import timedelta
from contextlib import contextmanager

import psycopg
from django.db import DatabaseError, IntegrityError, OperationalError, connections

from ..exceptions import ArchivePruneRefused, JobIdConflict
from .base import BaseStore, ClaimedJob, SweepBatch, lock_key

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

# Bulk insert (enqueue_many) by COPY, the fastest path into PostgreSQL. COPY cannot evaluate
# now(), so the batch first reads the transaction's now() (the very value an INSERT's now() would
# give in this transaction) and rows carry it: still the store clock, never the host's.
SQL_TRANSACTION_NOW = "SELECT now()"
SQL_COPY_JOBS = f"COPY headgate_job ({JOB_COLUMNS}) FROM STDIN"
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
        'type_path', 'django_headgate.exceptions.LeaseExpired', 'worker_id', j.lease_owner,
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

# -- retention sweep and archive --
TERMINAL_STATES_SQL = "('succeeded', 'dead', 'cancelled')"
# The store clock in integer milliseconds (now() is the transaction's start: one value per batch).
NOW_MS = "floor(extract(epoch FROM now()) * 1000)::bigint"
ARCHIVE_COLUMNS = (
    "archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, "
    "result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms"
)
# Sweep one batch in one statement: lock expired terminal rows oldest expiry first
# (headgate_job_expires_idx) skipping locked ones, delete them, and copy those whose queue has
# an archive policy into the archive (routed to the partition of evicted_at_ms). Data-modifying
# CTEs all run on one snapshot and commit together. {queue_filter} is one of the two below.
SQL_SWEEP = f"""
WITH batch AS (
    SELECT id FROM headgate_job
    WHERE state IN {TERMINAL_STATES_SQL} AND expires_at <= now() {{queue_filter}}
    ORDER BY expires_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
), evicted AS (
    DELETE FROM headgate_job AS j USING batch
    WHERE j.id = batch.id AND j.state IN {TERMINAL_STATES_SQL}
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.errors, j.attempts, j.fingerprint,
              j.state, j.result, j.tags, j.created_at, j.finished_at
), archived AS (
    INSERT INTO headgate_job_archive ({ARCHIVE_COLUMNS})
    SELECT gen_random_uuid(), e.id, e.queue, e.task, e.args, e.kwargs, e.errors, e.attempts,
           e.fingerprint, e.state, e.result, e.tags, e.created_at, e.finished_at, {NOW_MS},
           floor(extract(epoch FROM p.archive_retention) * 1000)::bigint
    FROM evicted AS e JOIN headgate_archive_policy AS p ON p.queue = e.queue
    RETURNING 1
)
SELECT (SELECT count(*) FROM evicted), (SELECT count(*) FROM archived)
"""
# Every queue but those held (paused) or swept on their own (cleanup_batch_limit).
SWEEP_DEFAULT_QUEUES = (
    "AND queue NOT IN (SELECT queue FROM headgate_queue_policy "
    "WHERE paused OR cleanup_batch_limit IS NOT NULL)"
)
SQL_SWEEP_DEFAULT = SQL_SWEEP.format(queue_filter=SWEEP_DEFAULT_QUEUES)
SQL_SWEEP_QUEUE = SQL_SWEEP.format(queue_filter="AND queue = %s")
SQL_NOW_MS = f"SELECT {NOW_MS}"
# One row of a child table, if any ({table} is a quoted name from archive_months).
SQL_ARCHIVE_HAS_ROWS = "SELECT EXISTS (SELECT 1 FROM {table})"
# Any row of a child not yet expired: one probe of its expires_at_ms index.
SQL_ARCHIVE_HAS_UNEXPIRED = "SELECT EXISTS (SELECT 1 FROM {table} WHERE expires_at_ms > %s)"
# Lock wait bound of this transaction only (milliseconds).
SQL_SET_LOCAL_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', %s, true)"
# Waits for sweeps writing into the child to commit, and holds new ones until our commit.
SQL_LOCK_ARCHIVE_CHILD = "LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"
SQL_TRUNCATE_ARCHIVE_CHILD = "TRUNCATE TABLE {table}"
# Catalogue row estimates of every child; a never-analysed child (-1) with no pages is empty.
SQL_ARCHIVE_ESTIMATES = """
SELECT c.relname,
       CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint
            WHEN pg_relation_size(c.oid) = 0 THEN 0 END
FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
WHERE i.inhparent = 'headgate_job_archive'::regclass
"""
# lock_not_available: LOCK TABLE ran into lock_timeout.
LOCK_NOT_AVAILABLE = "55P03"



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
    SQL_REGISTER_HEARTBEAT = SQL_REGISTER_HEARTBEAT
    SQL_TRY_LOCK = SQL_TRY_LOCK
    SQL_UNLOCK = SQL_UNLOCK
    notify_channel = NOTIFY_CHANNEL

    def insert_job(self, job):
        params = self.job_params(job)
        try:
            with self.cursor() as cursor:
                cursor.execute(SQL_INSERT_JOB, params)
                row = cursor.fetchone()
        except IntegrityError as exc:
            raise JobIdConflict(f"A job with id {job.id} already exists.", job_id=job.id) from exc
        return (row[0], row[1]) if row else None

    def insert_jobs(self, jobs):
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(SQL_TRANSACTION_NOW, [])
            now = cursor.fetchone()[0]
            try:
                # The driver's COPY bypasses Django's cursor wrapper: map its errors here.
                with self.connection.wrap_database_errors, cursor.cursor.copy(SQL_COPY_JOBS) as copy:
                    for job in jobs:
                        run_at = job.run_at if job.run_at is not None else now + timedelta(seconds=job.delay_seconds)
                        copy.write_row((
                            job.id, job.queue, job.task, job.args_json, job.kwargs_json, job.priority,
                            "available", run_at, 0, job.max_attempts, 0, None, job.fingerprint, "[]",
                            job.tags_json, job.retention_class, now,
                        ))
            except IntegrityError as exc:
                raise JobIdConflict("A job id in the batch already exists.") from exc
            cursor.execute(SQL_NOTIFY, [])

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

    def lock_param(self, name):
        return lock_key(name)  # pg_try_advisory_lock takes a bigint

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

    # -- retention sweep and archive --

    def sweep_expired(self, limit, queue=None):
        with self.cursor() as cursor:
            if queue is None:
                cursor.execute(SQL_SWEEP_DEFAULT, [limit])
            else:
                cursor.execute(SQL_SWEEP_QUEUE, [queue, limit])
            evicted, archived = cursor.fetchone()
        return SweepBatch(evicted=evicted, archived=archived)

    def archive_now_ms(self):
        with self.cursor() as cursor:
            cursor.execute(SQL_NOW_MS, [])
            return cursor.fetchone()[0]

    def _child(self, partition):
        return self.connection.ops.quote_name(self.check_archive_partition(partition).table_name)

    def archive_partition_has_rows(self, partition):
        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_HAS_ROWS.format(table=self._child(partition)), [])
            return cursor.fetchone()[0]

    def archive_partition_has_unexpired(self, partition, now_ms):
        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_HAS_UNEXPIRED.format(table=self._child(partition)), [now_ms])
            return cursor.fetchone()[0]

    @contextmanager
    def archive_partition_locked(self, partition, timeout_seconds=10.0):
        table = self._child(partition)
        with self.atomic():
            try:
                with self.cursor() as cursor:
                    cursor.execute(SQL_SET_LOCAL_LOCK_TIMEOUT, [f"{max(1, round(timeout_seconds * 1000))}ms"])
                    cursor.execute(SQL_LOCK_ARCHIVE_CHILD.format(table=table), [])
            except OperationalError as exc:
                if getattr(exc.__cause__, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                    raise
                raise ArchivePruneRefused(
                    f"Archive partition {partition.table_name} stayed locked for {timeout_seconds:g} s.",
                    reason="locked", month=partition.key,
                ) from None
            yield

    def truncate_archive_partition(self, partition):
        if self.check_archive_partition(partition).is_edge:
            raise ValueError("The archive's edge partitions are never truncated by month.")
        with self.cursor() as cursor:
            cursor.execute(SQL_TRUNCATE_ARCHIVE_CHILD.format(table=self._child(partition)), [])

    def archive_row_estimates(self):
        from ..archive_months import PARTITIONS

        keys = {partition.table_name: partition.key for partition in PARTITIONS}
        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_ESTIMATES, [])
            rows = dict(cursor.fetchall())
        return {key: rows.get(name) for name, key in keys.items()}
