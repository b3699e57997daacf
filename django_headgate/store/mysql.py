"""MySQL / MariaDB store (MariaDB 10.6+ / MySQL 8.0+ for SKIP LOCKED).

Differences from PostgreSQL, each handled here: no ``UPDATE ... RETURNING`` (claims select then
update inside one transaction), the store clock is ``UTC_TIMESTAMP(6)`` (Django keeps UTC in
DATETIME columns), durations are BIGINT microseconds, ``key`` is a reserved word, advisory locks
are ``GET_LOCK(name, 0)``, and there is no LISTEN/NOTIFY (workers poll with backoff).
"""

from contextlib import contextmanager
from datetime import timezone

from django.db import IntegrityError, OperationalError

from ..exceptions import ArchivePruneRefused, JobIdConflict
from .base import BaseStore, ClaimedJob, SweepBatch, placeholders

# MySQL's duplicate-key error number.
ER_DUP_ENTRY = 1062
UNIQUE_KEY_INDEX = "unique_key"

NOW = "UTC_TIMESTAMP(6)"
JOB_COLUMNS = (
    "id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts, fence, "
    "unique_key, fingerprint, errors, tags, retention_class, created_at"
)

# The expires_at of a job turning terminal now (NULL duration = forever -> NULL).
EXPIRES_NOW = (
    f"{NOW} + INTERVAL (SELECT rc.duration FROM headgate_retention_class rc "
    "WHERE rc.`key` = headgate_job.retention_class) MICROSECOND"
)
# An errors entry stamped with the store clock, appended to the JSON list.
APPEND_ERROR = (
    "JSON_ARRAY_APPEND(errors, '$', JSON_EXTRACT(JSON_SET({error}, '$.at', "
    f"DATE_FORMAT({NOW}, '%%Y-%%m-%%dT%%H:%%i:%%s.%%fZ')), '$'))"
)

SQL_NOW = f"SELECT {NOW}"
SQL_GET_STATE = "SELECT state FROM headgate_job WHERE id = %s"

# Insert one job (run_at absolute, or now + delay).
SQL_INSERT_JOB_ROW = (
    f"(%s, %s, %s, %s, %s, %s, 'available', COALESCE(%s, {NOW} + INTERVAL %s MICROSECOND), "
    f"0, %s, 0, %s, %s, '[]', %s, %s, {NOW})"
)
SQL_INSERT_JOB = f"INSERT INTO headgate_job ({JOB_COLUMNS}) VALUES {SQL_INSERT_JOB_ROW}"
SQL_INSERTED_TIMES = "SELECT created_at, run_at FROM headgate_job WHERE id = %s"
SQL_INSERT_JOBS_HEAD = f"INSERT INTO headgate_job ({JOB_COLUMNS}) VALUES "

SQL_CANCEL = f"""
UPDATE headgate_job
SET state = 'cancelled', finished_at = {NOW}, expires_at = {EXPIRES_NOW},
    lease_owner = NULL, lease_expires_at = NULL
WHERE id = %s AND state IN ('available', 'running')
"""
SQL_RETRY = f"""
UPDATE headgate_job
SET state = 'available', run_at = {NOW}, max_attempts = GREATEST(max_attempts, attempts + 1),
    finished_at = NULL, expires_at = NULL, result = NULL
WHERE id = %s AND state IN ('dead', 'cancelled')
"""

# Claim step 1: lock ready rows, skipping those other workers hold (claim index).
SQL_CLAIM_SELECT = f"""
SELECT id, queue, task, args, kwargs, attempts, max_attempts, fence FROM headgate_job
WHERE state = 'available' AND run_at <= {NOW} {{queue_filter}}
ORDER BY priority DESC, run_at
LIMIT %s
FOR UPDATE SKIP LOCKED
"""
# Claim step 2: lease the locked rows (same transaction).
SQL_CLAIM_UPDATE = f"""
UPDATE headgate_job
SET state = 'running', attempts = attempts + 1, fence = fence + 1, lease_owner = %s,
    lease_expires_at = {NOW} + INTERVAL %s MICROSECOND, started_at = {NOW}
WHERE id IN ({{ids}})
"""

SQL_RENEW = f"""
UPDATE headgate_job SET lease_expires_at = {NOW} + INTERVAL %s MICROSECOND
WHERE id = %s AND fence = %s AND state = 'running' AND lease_owner = %s
"""
SQL_COMPLETE = f"""
UPDATE headgate_job
SET state = 'succeeded', result = %s, finished_at = {NOW}, expires_at = {EXPIRES_NOW},
    lease_owner = NULL, lease_expires_at = NULL
WHERE id = %s AND fence = %s AND state = 'running'
"""
# Fenced failure. MySQL evaluates SET left to right, so `attempts`/`max_attempts` (read by the
# CASEs) are never assigned here.
SQL_FAIL = f"""
UPDATE headgate_job
SET errors = {APPEND_ERROR.format(error="%s")},
    run_at = CASE WHEN %s OR attempts >= max_attempts THEN run_at
             ELSE {NOW} + INTERVAL %s MICROSECOND END,
    finished_at = CASE WHEN %s OR attempts >= max_attempts THEN {NOW} END,
    expires_at = CASE WHEN %s OR attempts >= max_attempts THEN {EXPIRES_NOW} END,
    state = CASE WHEN %s OR attempts >= max_attempts THEN 'dead' ELSE 'available' END,
    lease_owner = NULL, lease_expires_at = NULL
WHERE id = %s AND fence = %s AND state = 'running'
"""
SQL_SET_PROGRESS = "UPDATE headgate_job SET progress = %s WHERE id = %s AND fence = %s AND state = 'running'"
SQL_APPEND_OUTPUT = (
    "UPDATE headgate_job SET output = RIGHT(CONCAT(COALESCE(output, ''), %s), %s) "
    "WHERE id = %s AND fence = %s AND state = 'running'"
)

# Rescue step 1: expired leases, oldest first, skipping rows another maintainer holds.
SQL_RESCUE_SELECT = f"""
SELECT id FROM headgate_job
WHERE state = 'running' AND lease_expires_at < {NOW}
ORDER BY lease_expires_at
LIMIT %s
FOR UPDATE SKIP LOCKED
"""
RESCUE_ERROR = (
    "JSON_OBJECT('attempt', attempts, 'type', 'LeaseExpired', "
    "'type_path', 'django_headgate.exceptions.LeaseExpired', 'worker_id', lease_owner, 'message', "
    "CONCAT('lease of ', COALESCE(lease_owner, '?'), ' expired'), 'traceback', '')"
)
SQL_RESCUE_UPDATE = f"""
UPDATE headgate_job
SET errors = {APPEND_ERROR.format(error=RESCUE_ERROR)},
    finished_at = CASE WHEN attempts >= max_attempts THEN {NOW} END,
    expires_at = CASE WHEN attempts >= max_attempts THEN {EXPIRES_NOW} END,
    state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'available' END,
    run_at = {NOW}, lease_owner = NULL, lease_expires_at = NULL
WHERE id IN ({{ids}})
"""

SQL_TRY_LOCK = "SELECT GET_LOCK(%s, 0)"
SQL_UNLOCK = "SELECT RELEASE_LOCK(%s)"

SQL_REGISTER_HEARTBEAT = f"""
INSERT INTO headgate_worker_heartbeat
    (worker_id, instance_id, hostname, pid, queues, started_at, last_heartbeat_at)
VALUES (%s, %s, %s, %s, %s, {NOW}, {NOW})
ON DUPLICATE KEY UPDATE
    instance_id = VALUES(instance_id), hostname = VALUES(hostname), pid = VALUES(pid),
    queues = VALUES(queues), started_at = {NOW}, last_heartbeat_at = {NOW}
"""
SQL_RENEW_HEARTBEAT = (
    f"UPDATE headgate_worker_heartbeat SET last_heartbeat_at = {NOW} "
    "WHERE worker_id = %s AND instance_id = %s"
)
SQL_DELETE_HEARTBEAT = "DELETE FROM headgate_worker_heartbeat WHERE worker_id = %s AND instance_id = %s"

# -- heartbeat prune --
# Step 1: lock stale heartbeat rows, oldest first (headgate_heartbeat_last_idx), skipping rows a
# renewal holds, at most LIMIT. {budget} bounds the statement's run time and lock waits:
# MariaDB takes SET STATEMENT ... FOR, MySQL 8 takes optimizer hints. {exclude_own} is empty or
# EXCLUDE_OWN_HEARTBEAT.
SQL_PRUNE_HEARTBEATS_SELECT = f"""
{{budget}}SELECT {{hints}}worker_id FROM headgate_worker_heartbeat
WHERE last_heartbeat_at < {NOW} - INTERVAL %s MICROSECOND {{exclude_own}}
ORDER BY last_heartbeat_at
LIMIT %s
FOR UPDATE SKIP LOCKED
"""
EXCLUDE_OWN_HEARTBEAT = "AND NOT (worker_id = %s AND instance_id = %s)"
# MariaDB: max_statement_time in seconds (fractions allowed), lock_wait_timeout in whole seconds.
MARIADB_BUDGET = "SET STATEMENT max_statement_time = %s, lock_wait_timeout = %s FOR "
# MySQL 8: MAX_EXECUTION_TIME in milliseconds (SELECT only), lock_wait_timeout in whole seconds.
MYSQL_BUDGET_HINTS = "/*+ MAX_EXECUTION_TIME(%s) SET_VAR(lock_wait_timeout = %s) */ "
# Step 2: delete the rows step 1 locked (same transaction; primary key).
SQL_PRUNE_HEARTBEATS_DELETE = "DELETE FROM headgate_worker_heartbeat WHERE worker_id IN ({ids})"

# -- retention sweep and archive --
TERMINAL_STATES_SQL = "('succeeded', 'dead', 'cancelled')"
# The store clock in integer milliseconds, from UTC_TIMESTAMP(6) by arithmetic alone (no session
# time zone involved, unlike UNIX_TIMESTAMP(NOW())).
NOW_MS = f"(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', {NOW}) DIV 1000)"
ARCHIVE_COLUMNS = (
    "archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, "
    "result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms"
)
# Queues the default sweep leaves alone: held (paused) or swept on their own (cleanup_batch_limit).
# Read before the locking SELECT, so that FOR UPDATE SKIP LOCKED never applies to policy rows.
SQL_SWEEP_SET_ASIDE_QUEUES = (
    "SELECT queue FROM headgate_queue_policy WHERE paused OR cleanup_batch_limit IS NOT NULL"
)
# Sweep step 1: lock expired terminal rows, oldest expiry first (headgate_job_expires_idx),
# skipping locked ones. {queue_filter}: empty, NOT IN (set-aside queues) or = one queue.
SQL_SWEEP_SELECT = f"""
SELECT id FROM headgate_job
WHERE state IN {TERMINAL_STATES_SQL} AND expires_at <= {NOW} {{queue_filter}}
ORDER BY expires_at
LIMIT %s
FOR UPDATE SKIP LOCKED
"""
# Sweep step 2 (same transaction): copy the locked rows of queues with an archive policy.
# {archive_id} is UUID() for a native uuid column (MariaDB >= 10.7), else its 32 hex digits.
SQL_SWEEP_ARCHIVE = f"""
INSERT INTO headgate_job_archive ({ARCHIVE_COLUMNS})
SELECT {{archive_id}}, j.id, j.queue, j.task, j.args, j.kwargs, j.errors, j.attempts, j.fingerprint,
       j.state, j.result, j.tags, j.created_at, j.finished_at, {NOW_MS}, p.archive_retention DIV 1000
FROM headgate_job AS j JOIN headgate_archive_policy AS p ON p.queue = j.queue
WHERE j.id IN ({{ids}})
"""
ARCHIVE_ID_NATIVE = "UUID()"
ARCHIVE_ID_HEX = "REPLACE(UUID(), '-', '')"
# Sweep step 3 (same transaction): delete the locked rows (primary key).
SQL_SWEEP_DELETE = f"DELETE FROM headgate_job WHERE id IN ({{ids}}) AND state IN {TERMINAL_STATES_SQL}"
SQL_NOW_MS = f"SELECT {NOW_MS}"
# {partition} is a quoted partition name from archive_months; PARTITION (...) reads only it.
SQL_ARCHIVE_HAS_ROWS = "SELECT EXISTS (SELECT 1 FROM headgate_job_archive PARTITION ({partition}))"
# Any row of the partition not yet expired: one probe of headgate_archive_expires_idx.
SQL_ARCHIVE_HAS_UNEXPIRED = (
    "SELECT EXISTS (SELECT 1 FROM headgate_job_archive PARTITION ({partition}) WHERE expires_at_ms > %s)"
)
# LOCK TABLES ... WRITE waits (at most lock_wait_timeout) for transactions that wrote to the
# archive to end and holds new writers until UNLOCK TABLES; it commits any open transaction.
SQL_GET_LOCK_WAIT_TIMEOUT = "SELECT @@SESSION.lock_wait_timeout"
SQL_SET_LOCK_WAIT_TIMEOUT = "SET SESSION lock_wait_timeout = %s"
SQL_LOCK_ARCHIVE = "LOCK TABLES headgate_job_archive WRITE"
SQL_UNLOCK_TABLES = "UNLOCK TABLES"
SQL_TRUNCATE_ARCHIVE_PARTITION = "ALTER TABLE headgate_job_archive TRUNCATE PARTITION {partition}"
# InnoDB's row estimate of every partition (information_schema: no scan).
SQL_ARCHIVE_ESTIMATES = """
SELECT PARTITION_NAME, TABLE_ROWS FROM information_schema.PARTITIONS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'headgate_job_archive'
"""
# ER_LOCK_WAIT_TIMEOUT: LOCK TABLES ran into lock_wait_timeout.
ER_LOCK_WAIT_TIMEOUT = 1205

INSERT_BATCH_ROWS = 1000
MICROSECONDS = 1_000_000


class MySQLStore(BaseStore):
    vendor = "mysql"
    supports_skip_locked = True
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
    SQL_INSERT_JOBS_HEAD = SQL_INSERT_JOBS_HEAD
    SQL_INSERT_JOB_ROW = SQL_INSERT_JOB_ROW
    SQL_RENEW = SQL_RENEW
    SQL_COMPLETE = SQL_COMPLETE
    INSERT_BATCH_ROWS = INSERT_BATCH_ROWS

    def duration_param(self, seconds):
        return round(seconds * MICROSECONDS)  # added as INTERVAL n MICROSECOND

    def from_db_datetime(self, value):
        return value.replace(tzinfo=timezone.utc) if value is not None else None

    def insert_job(self, job):
        try:
            with self.atomic(), self.cursor() as cursor:
                cursor.execute(SQL_INSERT_JOB, self.job_params(job))
                cursor.execute(SQL_INSERTED_TIMES, [self.db_uuid(job.id)])
                created_at, run_at = cursor.fetchone()
        except IntegrityError as exc:
            if job.unique_key is not None and UNIQUE_KEY_INDEX in str(exc.args[-1]):
                return None  # the key is held by a committed hot row
            raise JobIdConflict(f"A job with id {job.id} already exists.", job_id=job.id) from exc
        return self.from_db_datetime(created_at), self.from_db_datetime(run_at)

    def cancel_job(self, job_id):
        return self._update_state(SQL_CANCEL, job_id)

    def retry_job(self, job_id):
        return self._update_state(SQL_RETRY, job_id)

    def _update_state(self, sql, job_id):
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(sql, [self.db_uuid(job_id)])
            if cursor.rowcount == 0:
                return None
            cursor.execute(SQL_GET_STATE, [self.db_uuid(job_id)])
            return cursor.fetchone()[0]

    def claim_jobs(self, worker_id, queues, limit, lease_seconds):
        if queues:
            select = SQL_CLAIM_SELECT.format(queue_filter=f"AND queue IN ({placeholders(len(queues))})")
            params = [*queues, limit]
        else:
            select = SQL_CLAIM_SELECT.format(queue_filter="")
            params = [limit]
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(select, params)
            rows = cursor.fetchall()
            if not rows:
                return []
            cursor.execute(
                SQL_CLAIM_UPDATE.format(ids=placeholders(len(rows))),
                [worker_id, self.duration_param(lease_seconds), *(row[0] for row in rows)],
            )
        return [
            ClaimedJob(self.from_db_uuid(id_), queue, task, args, kwargs, attempts + 1, max_attempts, fence + 1)
            for id_, queue, task, args, kwargs, attempts, max_attempts, fence in rows
        ]

    def fail_job(self, job_id, fence, error_json, retry_delay_seconds, give_up=False):
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(SQL_FAIL, [
                error_json, give_up, self.duration_param(retry_delay_seconds), give_up, give_up,
                give_up, self.db_uuid(job_id), fence,
            ])
            self.fenced(cursor, job_id, fence)
            cursor.execute(SQL_GET_STATE, [self.db_uuid(job_id)])
            return cursor.fetchone()[0]

    def rescue_expired(self, limit):
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(SQL_RESCUE_SELECT, [limit])
            ids = [row[0] for row in cursor.fetchall()]
            if ids:
                cursor.execute(SQL_RESCUE_UPDATE.format(ids=placeholders(len(ids))), ids)
        return len(ids)

    # -- heartbeat prune --

    def prune_heartbeats(self, retention_seconds, limit, exclude=None, timeout_seconds=5.0):
        lock_seconds = max(1, round(timeout_seconds))
        if self.connection.mysql_is_mariadb:
            budget, hints = MARIADB_BUDGET, ""
            budget_params = [float(timeout_seconds), lock_seconds]
        else:
            budget, hints = "", MYSQL_BUDGET_HINTS
            budget_params = [max(1, round(timeout_seconds * 1000)), lock_seconds]
        params = [*budget_params, self.duration_param(retention_seconds)]
        if exclude is None:
            exclude_own = ""
        else:
            exclude_own = EXCLUDE_OWN_HEARTBEAT
            params += [exclude[0], self.db_uuid(exclude[1])]
        params.append(limit)
        select = SQL_PRUNE_HEARTBEATS_SELECT.format(budget=budget, hints=hints, exclude_own=exclude_own)
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(select, params)
            ids = [row[0] for row in cursor.fetchall()]
            if ids:
                cursor.execute(SQL_PRUNE_HEARTBEATS_DELETE.format(ids=placeholders(len(ids))), ids)
        return len(ids)

    # -- retention sweep and archive --

    def sweep_expired(self, limit, queue=None):
        with self.atomic(), self.cursor() as cursor:
            if queue is not None:
                queue_filter, params = "AND queue = %s", [queue, limit]
            else:
                cursor.execute(SQL_SWEEP_SET_ASIDE_QUEUES, [])
                set_aside = [row[0] for row in cursor.fetchall()]
                queue_filter = f"AND queue NOT IN ({placeholders(len(set_aside))})" if set_aside else ""
                params = [*set_aside, limit]
            cursor.execute(SQL_SWEEP_SELECT.format(queue_filter=queue_filter), params)
            ids = [row[0] for row in cursor.fetchall()]
            if not ids:
                return SweepBatch(evicted=0, archived=0)
            archive_id = ARCHIVE_ID_NATIVE if self.connection.features.has_native_uuid_field else ARCHIVE_ID_HEX
            cursor.execute(SQL_SWEEP_ARCHIVE.format(archive_id=archive_id, ids=placeholders(len(ids))), ids)
            archived = cursor.rowcount
            cursor.execute(SQL_SWEEP_DELETE.format(ids=placeholders(len(ids))), ids)
            return SweepBatch(evicted=cursor.rowcount, archived=archived)

    def archive_now_ms(self):
        with self.cursor() as cursor:
            cursor.execute(SQL_NOW_MS, [])
            return int(cursor.fetchone()[0])

    def _partition(self, partition):
        return self.connection.ops.quote_name(self.check_archive_partition(partition).partition_name)

    def archive_partition_has_rows(self, partition):
        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_HAS_ROWS.format(partition=self._partition(partition)), [])
            return bool(cursor.fetchone()[0])

    def archive_partition_has_unexpired(self, partition, now_ms):
        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_HAS_UNEXPIRED.format(partition=self._partition(partition)), [now_ms])
            return bool(cursor.fetchone()[0])

    @contextmanager
    def archive_partition_locked(self, partition, timeout_seconds=10.0):
        self.check_archive_partition(partition)
        if self.connection.in_atomic_block:
            # LOCK TABLES and the TRUNCATE PARTITION DDL would commit the caller's transaction.
            raise ArchivePruneRefused(
                "On MySQL/MariaDB an archive month cannot be pruned inside a transaction "
                "(LOCK TABLES and TRUNCATE PARTITION commit it).",
                reason="in_transaction", month=partition.key,
            )
        with self.cursor() as cursor:
            cursor.execute(SQL_GET_LOCK_WAIT_TIMEOUT, [])
            previous = cursor.fetchone()[0]
            cursor.execute(SQL_SET_LOCK_WAIT_TIMEOUT, [max(1, round(timeout_seconds))])
            try:
                cursor.execute(SQL_LOCK_ARCHIVE, [])
            except OperationalError as exc:
                cursor.execute(SQL_SET_LOCK_WAIT_TIMEOUT, [previous])
                if exc.args and exc.args[0] == ER_LOCK_WAIT_TIMEOUT:
                    raise ArchivePruneRefused(
                        f"The archive table stayed locked for {timeout_seconds:g} s.",
                        reason="locked", month=partition.key,
                    ) from None
                raise
        try:
            yield
        finally:
            with self.cursor() as cursor:
                cursor.execute(SQL_UNLOCK_TABLES, [])
                cursor.execute(SQL_SET_LOCK_WAIT_TIMEOUT, [previous])

    def truncate_archive_partition(self, partition):
        if self.check_archive_partition(partition).is_edge:
            raise ValueError("The archive's edge partitions are never truncated by month.")
        with self.cursor() as cursor:
            cursor.execute(SQL_TRUNCATE_ARCHIVE_PARTITION.format(partition=self._partition(partition)), [])

    def archive_row_estimates(self):
        from ..archive_months import PARTITIONS

        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_ESTIMATES, [])
            rows = {name: (int(count) if count is not None else None) for name, count in cursor.fetchall()}
        return {partition.key: rows.get(partition.partition_name) for partition in PARTITIONS}
