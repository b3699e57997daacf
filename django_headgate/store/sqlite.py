"""SQLite store: the embedded development default.

SQLite has one writer at a time, so claims need no SKIP LOCKED: the claim is a single
``UPDATE ... WHERE id IN (SELECT ... LIMIT n) RETURNING`` and writers queue on the database lock
(set ``OPTIONS = {"timeout": 30, "transaction_mode": "IMMEDIATE"}`` and WAL). Times are text in
Django's format (UTC); the store clock is ``strftime('%Y-%m-%d %H:%M:%f', 'now')``. There is no
LISTEN/NOTIFY and no cluster-wide lock: singleton duties are exclusive only within a process.
"""

import threading
from contextlib import contextmanager
from datetime import timezone

from django.db import IntegrityError, OperationalError
from django.utils.dateparse import parse_datetime

from ..exceptions import ArchivePruneRefused, JobIdConflict
from .base import BaseStore, ClaimedJob, SweepBatch, placeholders

# '%%' because every statement runs with a parameter list: Django's SQLite cursor then turns '%%'
# into '%', and its DEBUG query log formats ``sql % params`` (a bare '%Y' would raise there).
NOW = "strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now')"
# now + a bound modifier such as '+2.500 seconds'
NOW_PLUS = "strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now', {modifier})"
JOB_COLUMNS = (
    "id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts, fence, "
    "unique_key, fingerprint, errors, tags, retention_class, created_at"
)
# The expires_at of a job turning terminal now (durations are integer microseconds; NULL =
# forever makes the modifier NULL and so the result NULL).
EXPIRES_NOW = NOW_PLUS.format(modifier=(
    "(SELECT '+' || (rc.duration / 1000000.0) || ' seconds' FROM headgate_retention_class rc "
    "WHERE rc.\"key\" = headgate_job.retention_class)"
))
APPEND_ERROR = f"json_insert(errors, '$[#]', json_set({{error}}, '$.at', {NOW}))"

SQL_NOW = f"SELECT {NOW}"
SQL_GET_STATE = "SELECT state FROM headgate_job WHERE id = %s"

SQL_INSERT_JOB_ROW = (
    f"(%s, %s, %s, %s, %s, %s, 'available', COALESCE(%s, {NOW_PLUS.format(modifier='%s')}), "
    f"0, %s, 0, %s, %s, '[]', %s, %s, {NOW})"
)
SQL_INSERT_JOBS_HEAD = f"INSERT INTO headgate_job ({JOB_COLUMNS}) VALUES "
SQL_INSERT_JOB = (
    SQL_INSERT_JOBS_HEAD + SQL_INSERT_JOB_ROW + " ON CONFLICT (unique_key) DO NOTHING RETURNING created_at, run_at"
)

SQL_CANCEL = f"""
UPDATE headgate_job
SET state = 'cancelled', finished_at = {NOW}, expires_at = {EXPIRES_NOW},
    lease_owner = NULL, lease_expires_at = NULL
WHERE id = %s AND state IN ('available', 'running')
RETURNING state
"""
SQL_RETRY = f"""
UPDATE headgate_job
SET state = 'available', run_at = {NOW}, max_attempts = max(max_attempts, attempts + 1),
    finished_at = NULL, expires_at = NULL, result = NULL
WHERE id = %s AND state IN ('dead', 'cancelled')
RETURNING state
"""

# Claim in one statement; SQLite's single writer makes the subquery + update atomic.
SQL_CLAIM = f"""
UPDATE headgate_job
SET state = 'running', attempts = attempts + 1, fence = fence + 1, lease_owner = %s,
    lease_expires_at = {NOW_PLUS.format(modifier='%s')}, started_at = {NOW}
WHERE id IN (
    SELECT id FROM headgate_job
    WHERE state = 'available' AND run_at <= {NOW} {{queue_filter}}
    ORDER BY priority DESC, run_at
    LIMIT %s
)
RETURNING id, queue, task, args, kwargs, attempts, max_attempts, fence
"""
SQL_RENEW = f"""
UPDATE headgate_job SET lease_expires_at = {NOW_PLUS.format(modifier='%s')}
WHERE id = %s AND fence = %s AND state = 'running' AND lease_owner = %s
"""
SQL_COMPLETE = f"""
UPDATE headgate_job
SET state = 'succeeded', result = %s, finished_at = {NOW}, expires_at = {EXPIRES_NOW},
    lease_owner = NULL, lease_expires_at = NULL
WHERE id = %s AND fence = %s AND state = 'running'
"""
# Fenced failure; ``give_up`` and the exhausted-attempts test are folded into one bound flag
# per CASE (positional parameters: Django's SQLite cursor would misread strftime's % signs
# in a named-parameter query).
DEAD_IF = "(%s OR attempts >= max_attempts)"
SQL_FAIL = f"""
UPDATE headgate_job
SET state = CASE WHEN {DEAD_IF} THEN 'dead' ELSE 'available' END,
    run_at = CASE WHEN {DEAD_IF} THEN run_at ELSE {NOW_PLUS.format(modifier='%s')} END,
    finished_at = CASE WHEN {DEAD_IF} THEN {NOW} END,
    expires_at = CASE WHEN {DEAD_IF} THEN {EXPIRES_NOW} END,
    errors = {APPEND_ERROR.format(error='%s')},
    lease_owner = NULL, lease_expires_at = NULL
WHERE id = %s AND fence = %s AND state = 'running'
RETURNING state
"""
SQL_SET_PROGRESS = "UPDATE headgate_job SET progress = %s WHERE id = %s AND fence = %s AND state = 'running'"
SQL_APPEND_OUTPUT = (
    "UPDATE headgate_job SET output = substr(coalesce(output, '') || %s, -%s) "
    "WHERE id = %s AND fence = %s AND state = 'running'"
)
RESCUE_ERROR = (
    "json_object('attempt', attempts, 'type', 'LeaseExpired', "
    "'type_path', 'django_headgate.exceptions.LeaseExpired', 'worker_id', lease_owner, 'message', "
    "'lease of ' || coalesce(lease_owner, '?') || ' expired', 'traceback', '')"
)
SQL_RESCUE = f"""
UPDATE headgate_job
SET state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'available' END,
    finished_at = CASE WHEN attempts >= max_attempts THEN {NOW} END,
    expires_at = CASE WHEN attempts >= max_attempts THEN {EXPIRES_NOW} END,
    errors = {APPEND_ERROR.format(error=RESCUE_ERROR)},
    run_at = {NOW}, lease_owner = NULL, lease_expires_at = NULL
WHERE id IN (
    SELECT id FROM headgate_job
    WHERE state = 'running' AND lease_expires_at < {NOW}
    ORDER BY lease_expires_at
    LIMIT %s
)
"""
SQL_REGISTER_HEARTBEAT = f"""
INSERT INTO headgate_worker_heartbeat
    (worker_id, instance_id, hostname, pid, queues, started_at, last_heartbeat_at)
VALUES (%s, %s, %s, %s, %s, {NOW}, {NOW})
ON CONFLICT (worker_id) DO UPDATE SET
    instance_id = excluded.instance_id, hostname = excluded.hostname, pid = excluded.pid,
    queues = excluded.queues, started_at = {NOW}, last_heartbeat_at = {NOW}
"""
SQL_RENEW_HEARTBEAT = (
    f"UPDATE headgate_worker_heartbeat SET last_heartbeat_at = {NOW} "
    "WHERE worker_id = %s AND instance_id = %s"
)
SQL_DELETE_HEARTBEAT = "DELETE FROM headgate_worker_heartbeat WHERE worker_id = %s AND instance_id = %s"

# -- heartbeat prune --
# Stale heartbeat rows, oldest first (headgate_heartbeat_last_idx), at most LIMIT, in one
# statement (SQLite's single writer: no SKIP LOCKED needed, no statement timeout available).
# {exclude_own} is empty or EXCLUDE_OWN_HEARTBEAT.
SQL_PRUNE_HEARTBEATS = f"""
DELETE FROM headgate_worker_heartbeat WHERE worker_id IN (
    SELECT worker_id FROM headgate_worker_heartbeat
    WHERE last_heartbeat_at < {NOW_PLUS.format(modifier='%s')} {{exclude_own}}
    ORDER BY last_heartbeat_at
    LIMIT %s
)
"""
EXCLUDE_OWN_HEARTBEAT = "AND NOT (worker_id = %s AND instance_id = %s)"
SQL_PRUNE_HEARTBEATS_ALL = SQL_PRUNE_HEARTBEATS.format(exclude_own="")
SQL_PRUNE_HEARTBEATS_NOT_OWN = SQL_PRUNE_HEARTBEATS.format(exclude_own=EXCLUDE_OWN_HEARTBEAT)

# -- retention sweep and archive --
# SQLite keeps the archive in one plain table: a "partition" is a range of evicted_at_ms.
TERMINAL_STATES_SQL = "('succeeded', 'dead', 'cancelled')"
# The store clock in integer milliseconds ('now' is fixed for the whole statement).
NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000.0 + 0.5 AS INTEGER)"
ARCHIVE_COLUMNS = (
    "archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, "
    "result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms"
)
# Every queue but those held (paused) or swept on their own (cleanup_batch_limit).
SWEEP_DEFAULT_QUEUES = (
    "AND queue NOT IN (SELECT queue FROM headgate_queue_policy "
    "WHERE paused OR cleanup_batch_limit IS NOT NULL)"
)
# Sweep step 1: expired terminal rows, oldest expiry first (headgate_job_expires_idx). SQLite's
# single writer stands in for SKIP LOCKED; a concurrent write makes step 2 fail, not diverge.
SQL_SWEEP_SELECT = f"""
SELECT id FROM headgate_job
WHERE state IN {TERMINAL_STATES_SQL} AND expires_at <= {NOW} {{queue_filter}}
ORDER BY expires_at
LIMIT %s
"""
SQL_SWEEP_SELECT_DEFAULT = SQL_SWEEP_SELECT.format(queue_filter=SWEEP_DEFAULT_QUEUES)
SQL_SWEEP_SELECT_QUEUE = SQL_SWEEP_SELECT.format(queue_filter="AND queue = %s")
# Sweep step 2 (same transaction): copy the selected rows of queues with an archive policy.
SQL_SWEEP_ARCHIVE = f"""
INSERT INTO headgate_job_archive ({ARCHIVE_COLUMNS})
SELECT lower(hex(randomblob(16))), j.id, j.queue, j.task, j.args, j.kwargs, j.errors, j.attempts,
       j.fingerprint, j.state, j.result, j.tags, j.created_at, j.finished_at, {NOW_MS},
       p.archive_retention / 1000
FROM headgate_job AS j JOIN headgate_archive_policy AS p ON p.queue = j.queue
WHERE j.id IN ({{ids}})
"""
# Sweep step 3 (same transaction): delete the selected rows (primary key).
SQL_SWEEP_DELETE = f"DELETE FROM headgate_job WHERE id IN ({{ids}}) AND state IN {TERMINAL_STATES_SQL}"
SQL_NOW_MS = f"SELECT {NOW_MS}"
# A partition's rows: [start, end) of evicted_at_ms (headgate_archive_evicted_idx).
IN_PARTITION = "evicted_at_ms >= %s AND evicted_at_ms < %s"
SQL_ARCHIVE_HAS_ROWS = f"SELECT EXISTS (SELECT 1 FROM headgate_job_archive WHERE {IN_PARTITION})"
SQL_ARCHIVE_HAS_UNEXPIRED = (
    f"SELECT EXISTS (SELECT 1 FROM headgate_job_archive WHERE {IN_PARTITION} AND expires_at_ms > %s)"
)
SQL_DELETE_ARCHIVE_PARTITION = f"DELETE FROM headgate_job_archive WHERE {IN_PARTITION}"
# Exact rows per month (SQLite is the development database: a count is cheap enough).
SQL_ARCHIVE_COUNTS = (
    "SELECT min(evicted_at_ms), count(*) FROM headgate_job_archive "
    "GROUP BY strftime('%%Y%%m', evicted_at_ms / 1000, 'unixepoch')"
)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# SQLite allows 32,766 bound parameters per statement; 13 per row.
INSERT_BATCH_ROWS = 500

_process_locks = {}
_process_locks_guard = threading.Lock()


def seconds_modifier(seconds):
    """A bound strftime modifier for ``seconds`` (never built from caller text)."""
    return f"{float(seconds):+.6f} seconds"


class SQLiteStore(BaseStore):
    vendor = "sqlite"

    SQL_NOW = SQL_NOW
    SQL_GET_STATE = SQL_GET_STATE
    SQL_SET_PROGRESS = SQL_SET_PROGRESS
    SQL_APPEND_OUTPUT = SQL_APPEND_OUTPUT
    SQL_RENEW_HEARTBEAT = SQL_RENEW_HEARTBEAT
    SQL_DELETE_HEARTBEAT = SQL_DELETE_HEARTBEAT
    SQL_REGISTER_HEARTBEAT = SQL_REGISTER_HEARTBEAT
    SQL_INSERT_JOBS_HEAD = SQL_INSERT_JOBS_HEAD
    SQL_INSERT_JOB_ROW = SQL_INSERT_JOB_ROW
    SQL_RENEW = SQL_RENEW
    SQL_COMPLETE = SQL_COMPLETE
    INSERT_BATCH_ROWS = INSERT_BATCH_ROWS

    def duration_param(self, seconds):
        return seconds_modifier(seconds)  # a strftime modifier such as '+30.000000 seconds'

    def from_db_datetime(self, value):
        # Declared datetime columns arrive parsed (Django registers a converter); expressions
        # such as the store clock arrive as text.
        if value is None:
            return None
        if isinstance(value, str):
            value = parse_datetime(value)
        return value.replace(tzinfo=timezone.utc)

    def insert_job(self, job):
        try:
            with self.cursor() as cursor:
                cursor.execute(SQL_INSERT_JOB, self.job_params(job))
                row = cursor.fetchone()
        except IntegrityError as exc:
            raise JobIdConflict(f"A job with id {job.id} already exists.", job_id=job.id) from exc
        if row is None:
            return None
        return self.from_db_datetime(row[0]), self.from_db_datetime(row[1])

    def cancel_job(self, job_id):
        return self._fetch_state(SQL_CANCEL, [self.db_uuid(job_id)])

    def retry_job(self, job_id):
        return self._fetch_state(SQL_RETRY, [self.db_uuid(job_id)])

    def _fetch_state(self, sql, params):
        with self.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
        return row[0] if row else None

    def claim_jobs(self, worker_id, queues, limit, lease_seconds):
        if queues:
            sql = SQL_CLAIM.format(queue_filter=f"AND queue IN ({placeholders(len(queues))})")
            params = [worker_id, self.duration_param(lease_seconds), *queues, limit]
        else:
            sql = SQL_CLAIM.format(queue_filter="")
            params = [worker_id, self.duration_param(lease_seconds), limit]
        with self.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        return [ClaimedJob(self.from_db_uuid(row[0]), *row[1:]) for row in rows]

    def fail_job(self, job_id, fence, error_json, retry_delay_seconds, give_up=False):
        with self.cursor() as cursor:
            cursor.execute(SQL_FAIL, [
                give_up, give_up, self.duration_param(retry_delay_seconds), give_up, give_up,
                error_json, self.db_uuid(job_id), fence,
            ])
            row = cursor.fetchone()
        if row is None:
            raise self.stale_lease(job_id, fence)
        return row[0]

    def rescue_expired(self, limit):
        with self.cursor() as cursor:
            cursor.execute(SQL_RESCUE, [limit])
            return cursor.rowcount

    @contextmanager
    def singleton_lock(self, name):
        with _process_locks_guard:
            lock = _process_locks.setdefault((self.alias, name), threading.Lock())
        taken = lock.acquire(blocking=False)
        try:
            yield taken
        finally:
            if taken:
                lock.release()

    # -- heartbeat prune --

    def prune_heartbeats(self, retention_seconds, limit, exclude=None, timeout_seconds=5.0):
        # No server-side statement timeout on SQLite: the connection's busy timeout bounds the
        # wait for the write lock, and the delete itself is bounded by ``limit``.
        cutoff = self.duration_param(-retention_seconds)
        with self.cursor() as cursor:
            if exclude is None:
                cursor.execute(SQL_PRUNE_HEARTBEATS_ALL, [cutoff, limit])
            else:
                cursor.execute(SQL_PRUNE_HEARTBEATS_NOT_OWN,
                               [cutoff, exclude[0], self.db_uuid(exclude[1]), limit])
            return cursor.rowcount

    # -- retention sweep and archive --

    archive_counts_are_exact = True

    def sweep_expired(self, limit, queue=None):
        with self.atomic(), self.cursor() as cursor:
            if queue is None:
                cursor.execute(SQL_SWEEP_SELECT_DEFAULT, [limit])
            else:
                cursor.execute(SQL_SWEEP_SELECT_QUEUE, [queue, limit])
            ids = [row[0] for row in cursor.fetchall()]
            if not ids:
                return SweepBatch(evicted=0, archived=0)
            cursor.execute(SQL_SWEEP_ARCHIVE.format(ids=placeholders(len(ids))), ids)
            archived = cursor.rowcount
            cursor.execute(SQL_SWEEP_DELETE.format(ids=placeholders(len(ids))), ids)
            return SweepBatch(evicted=cursor.rowcount, archived=archived)

    def archive_now_ms(self):
        with self.cursor() as cursor:
            cursor.execute(SQL_NOW_MS, [])
            return cursor.fetchone()[0]

    def _range(self, partition):
        partition = self.check_archive_partition(partition)
        start = INT64_MIN if partition.start_ms is None else partition.start_ms
        end = INT64_MAX if partition.end_ms is None else partition.end_ms
        return [start, end]

    def archive_partition_has_rows(self, partition):
        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_HAS_ROWS, self._range(partition))
            return bool(cursor.fetchone()[0])

    def archive_partition_has_unexpired(self, partition, now_ms):
        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_HAS_UNEXPIRED, [*self._range(partition), now_ms])
            return bool(cursor.fetchone()[0])

    @contextmanager
    def archive_partition_locked(self, partition, timeout_seconds=10.0):
        # One transaction: SQLite's single writer excludes a concurrent sweep; a write that
        # slipped in after our read makes our delete fail ("database is locked"), never diverge.
        self.check_archive_partition(partition)
        try:
            with self.atomic():
                yield
        except OperationalError as exc:
            if "locked" not in str(exc):
                raise
            raise ArchivePruneRefused(
                f"The archive was locked by another writer: {exc}", reason="locked", month=partition.key,
            ) from None

    def truncate_archive_partition(self, partition):
        if self.check_archive_partition(partition).is_edge:
            raise ValueError("The archive's edge partitions are never truncated by month.")
        with self.cursor() as cursor:
            cursor.execute(SQL_DELETE_ARCHIVE_PARTITION, self._range(partition))

    def archive_row_estimates(self):
        from ..archive_months import PARTITIONS, partition_for_ms

        counts = {partition.key: 0 for partition in PARTITIONS}
        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_COUNTS, [])
            for evicted_at_ms, rows in cursor.fetchall():
                counts[partition_for_ms(evicted_at_ms).key] += rows
        return counts
