"""MySQL / MariaDB store (MariaDB 10.6+ / MySQL 8.0+ for SKIP LOCKED).

Differences from PostgreSQL, each handled here: no ``UPDATE ... RETURNING`` (claims select then
update inside one transaction), the store clock is ``UTC_TIMESTAMP(6)`` (Django keeps UTC in
DATETIME columns), durations are BIGINT microseconds, ``key`` is a reserved word, advisory locks
are ``GET_LOCK(name, 0)``, and there is no LISTEN/NOTIFY (workers poll with backoff).
"""

from contextlib import contextmanager
from datetime import timezone

from django.db import IntegrityError

from ..exceptions import JobIdConflict
from .base import BaseStore, ClaimedJob

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
    "JSON_OBJECT('attempt', attempts, 'type', 'LeaseExpired', 'message', "
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

INSERT_BATCH_ROWS = 1000
MICROSECONDS = 1_000_000


def placeholders(count):
    return ", ".join(["%s"] * count)


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

    def from_db_datetime(self, value):
        return value.replace(tzinfo=timezone.utc) if value is not None else None

    def _job_params(self, job):
        run_at = self.db_datetime(job.run_at) if job.run_at is not None else None
        return [
            self.db_uuid(job.id), job.queue, job.task, job.args_json, job.kwargs_json,
            job.priority, run_at, round(job.delay_seconds * MICROSECONDS), job.max_attempts,
            job.unique_key, job.fingerprint, job.tags_json, job.retention_class,
        ]

    def insert_job(self, job):
        try:
            with self.atomic(), self.cursor() as cursor:
                cursor.execute(SQL_INSERT_JOB, self._job_params(job))
                cursor.execute(SQL_INSERTED_TIMES, [self.db_uuid(job.id)])
                created_at, run_at = cursor.fetchone()
        except IntegrityError as exc:
            if job.unique_key is not None and UNIQUE_KEY_INDEX in str(exc.args[-1]):
                return None  # the key is held by a committed hot row
            raise JobIdConflict(f"A job with id {job.id} already exists.", job_id=job.id) from exc
        return self.from_db_datetime(created_at), self.from_db_datetime(run_at)

    def insert_jobs(self, jobs):
        with self.atomic(), self.cursor() as cursor:
            for start in range(0, len(jobs), INSERT_BATCH_ROWS):
                chunk = jobs[start:start + INSERT_BATCH_ROWS]
                params = []
                for job in chunk:
                    params += self._job_params(job)
                sql = SQL_INSERT_JOBS_HEAD + ", ".join([SQL_INSERT_JOB_ROW] * len(chunk))
                try:
                    cursor.execute(sql, params)
                except IntegrityError as exc:
                    raise JobIdConflict("A job id in the batch already exists.") from exc

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
                [worker_id, round(lease_seconds * MICROSECONDS), *(row[0] for row in rows)],
            )
        return [
            ClaimedJob(self.from_db_uuid(id_), queue, task, args, kwargs, attempts + 1, max_attempts, fence + 1)
            for id_, queue, task, args, kwargs, attempts, max_attempts, fence in rows
        ]

    def renew_leases(self, worker_id, leases, lease_seconds):
        renewed = set()
        with self.atomic(), self.cursor() as cursor:
            for job_id, fence in leases:
                cursor.execute(SQL_RENEW, [round(lease_seconds * MICROSECONDS), self.db_uuid(job_id), fence, worker_id])
                if cursor.rowcount:
                    renewed.add(job_id)
        return renewed

    def complete_jobs(self, completions):
        accepted = set()
        with self.atomic(), self.cursor() as cursor:
            for done in completions:
                cursor.execute(SQL_COMPLETE, [done.result_json, self.db_uuid(done.job_id), done.fence])
                if cursor.rowcount:
                    accepted.add(done.job_id)
        return accepted

    def fail_job(self, job_id, fence, error_json, retry_delay_seconds, give_up=False):
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(SQL_FAIL, [
                error_json, give_up, round(retry_delay_seconds * MICROSECONDS), give_up, give_up,
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

    @contextmanager
    def singleton_lock(self, name):
        with self.cursor() as cursor:
            cursor.execute(SQL_TRY_LOCK, [name])
            taken = cursor.fetchone()[0] == 1
        try:
            yield taken
        finally:
            if taken:
                with self.cursor() as cursor:
                    cursor.execute(SQL_UNLOCK, [name])

    def register_heartbeat(self, worker_id, instance_id, hostname, pid, queues_json):
        with self.cursor() as cursor:
            cursor.execute(SQL_REGISTER_HEARTBEAT, [worker_id, self.db_uuid(instance_id), hostname, pid, queues_json])

    # -- heartbeat prune --

    def prune_heartbeats(self, retention_seconds, limit, exclude=None, timeout_seconds=5.0):
        lock_seconds = max(1, round(timeout_seconds))
        if self.connection.mysql_is_mariadb:
            budget, hints = MARIADB_BUDGET, ""
            budget_params = [float(timeout_seconds), lock_seconds]
        else:
            budget, hints = "", MYSQL_BUDGET_HINTS
            budget_params = [max(1, round(timeout_seconds * 1000)), lock_seconds]
        params = [*budget_params, round(retention_seconds * MICROSECONDS)]
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
