"""MySQL / MariaDB store, jobs section: enqueue, claim (SELECT ... SKIP LOCKED, then UPDATE, in
one transaction: there is no UPDATE ... RETURNING), fenced writes and rescue."""

from django.db import IntegrityError

from ...exceptions import JobIdConflict
from ..fragments import (  # noqa: F401  (SQL_GET_STATE: a statement of this vendor)
    CANCEL, CANCEL_ABORTED, CLAIM_ORDER, CLAIMED_COLUMNS, FENCED,
    INSERT_JOB_ROW, INSERT_JOBS_HEAD, READY, REQUEST_ABORT, RESCUE_SELECT, RETRY, SET_PROGRESS,
    SQL_GET_STATE, fail_statement,
    placeholders, rescue_release_statement,
)
from ..fragments import SQL_MARK_UNIQUE_UNTIL_FINISHED, SQL_RELEASE_UNIQUE_KEY  # noqa: F401  (unique_until)
from ..flow_fragments import claim_queue_filter
from ..records import ClaimedJob

NOW = "UTC_TIMESTAMP(6)"
# A bound duration (integer microseconds, see MySQLStore.duration_param) after the store clock.
NOW_PLUS = f"{NOW} + INTERVAL %s MICROSECOND"
# The expires_at of a job turning terminal now (NULL duration = forever -> NULL).
EXPIRES_NOW = (
    f"{NOW} + INTERVAL (SELECT rc.duration FROM headgate_retention_class rc "
    "WHERE rc.`key` = headgate_job.retention_class) MICROSECOND"
)
# An errors entry ({error}: JSON) stamped with the store clock, appended to the JSON list.
APPEND_ERROR = (
    "JSON_ARRAY_APPEND(errors, '$', JSON_EXTRACT(JSON_SET({error}, '$.at', "
    f"DATE_FORMAT({NOW}, '%%Y-%%m-%%dT%%H:%%i:%%s.%%fZ')), '$'))"
)

# Store clock.
SQL_NOW = f"SELECT {NOW}"

# Insert one job (run_at absolute, or now + delay); many rows share the head.
SQL_INSERT_JOB_ROW = INSERT_JOB_ROW.format(now=NOW, delay=NOW_PLUS)
# The head of a multi-row insert (enqueue_many).
SQL_INSERT_JOBS_HEAD = INSERT_JOBS_HEAD
# Insert one job (a unique_key held by a hot row raises ER_DUP_ENTRY: insert_job tells the keys apart).
SQL_INSERT_JOB = SQL_INSERT_JOBS_HEAD + SQL_INSERT_JOB_ROW
# created_at and run_at of the job just inserted (primary key).
SQL_INSERTED_TIMES = "SELECT created_at, run_at FROM headgate_job WHERE id = %s"
# After a duplicate key: does a row hold our id (primary key)?
SQL_ID_TAKEN = "SELECT 1 FROM headgate_job WHERE id = %s"

SQL_CANCEL = CANCEL.format(now=NOW, expires_now=EXPIRES_NOW, returning="")
SQL_RETRY = RETRY.format(now=NOW, greatest="GREATEST", returning="")
SQL_REQUEST_ABORT = REQUEST_ABORT.format(now=NOW, returning="")
SQL_CANCEL_ABORTED = CANCEL_ABORTED.format(now=NOW, expires_now=EXPIRES_NOW, fenced=FENCED)

# Claim step 1: lock ready rows, skipping those other workers hold (claim index).
SQL_CLAIM_SELECT = (
    f"SELECT {CLAIMED_COLUMNS} FROM headgate_job WHERE {READY.format(now=NOW)} {{queue_filter}} "
    f"{CLAIM_ORDER} LIMIT %s FOR UPDATE SKIP LOCKED"
)
# Claim step 2: lease the locked rows (same transaction).
SQL_CLAIM_UPDATE = (
    "UPDATE headgate_job SET state = 'running', attempts = attempts + 1, fence = fence + 1, "
    f"lease_owner = %s, lease_expires_at = {NOW_PLUS}, started_at = {NOW} WHERE id IN ({{ids}})"
)

# Fenced failure: retry after a delay, or dead when attempts are exhausted (or give_up).
SQL_FAIL = fail_statement(NOW, EXPIRES_NOW, APPEND_ERROR, NOW_PLUS)
SQL_SET_PROGRESS = SET_PROGRESS.format(value="%s")
# Append to the job's output, keeping the last %s characters (fenced).
SQL_APPEND_OUTPUT = (
    f"UPDATE headgate_job SET output = RIGHT(CONCAT(COALESCE(output, ''), %s), %s) WHERE {FENCED}"
)

# Rescue: lock lapsed leases, skipping rows another maintainer holds; release each.
SQL_RESCUE_SELECT = RESCUE_SELECT.format(now=NOW, lock="FOR UPDATE SKIP LOCKED")
# Rescue step 2, one locked row: available again now, or dead when attempts are exhausted.
SQL_RESCUE_RELEASE = rescue_release_statement(NOW, EXPIRES_NOW, APPEND_ERROR)


class MySQLJobs:
    def insert_job(self, job):
        try:
            with self.atomic(), self.cursor() as cursor:
                cursor.execute(SQL_INSERT_JOB, self.job_params(job))
                cursor.execute(SQL_INSERTED_TIMES, [self.db_uuid(job.id)])
                created_at, run_at = cursor.fetchone()
        except IntegrityError as exc:
            if not self.is_unique_violation(exc):
                raise
            # ER_DUP_ENTRY does not say which key (only its message text does): the id's key
            # is taken when a row holds the id; otherwise the unique_key is.
            if job.unique_key is None or self._id_taken(job.id):
                raise JobIdConflict(f"A job with id {job.id} already exists.", job_id=job.id) from exc
            return None  # the key is held by a committed hot row
        return self.from_db_datetime(created_at), self.from_db_datetime(run_at)

    def _id_taken(self, job_id):
        with self.cursor() as cursor:
            cursor.execute(SQL_ID_TAKEN, [self.db_uuid(job_id)])
            return cursor.fetchone() is not None

    def cancel_job(self, job_id):
        with self.atomic():
            state = self._update_state(SQL_CANCEL, job_id)
            if state == "cancelled":
                self.release_dependents([job_id])
                self.forget_edges([job_id])
                return state
            return self._update_state(SQL_REQUEST_ABORT, job_id)

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
            select = SQL_CLAIM_SELECT.format(queue_filter=claim_queue_filter(queues))
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
        return self.claimed_from_select(rows)

    def claimed_from_select(self, rows):
        """ClaimedJobs of the claim's selected rows, as the update that followed leased them."""
        return [
            ClaimedJob.from_row((self.from_db_uuid(id_), queue, task, args, kwargs, attempts + 1, max_attempts,
                                 fence + 1, *rest))
            for id_, queue, task, args, kwargs, attempts, max_attempts, fence, *rest in rows
        ]
