"""Store contract, jobs section: enqueue, operator actions, claim, fenced writes and rescue."""

from django.db import IntegrityError

from ...exceptions import JobIdConflict
from ..entries import dump_entry, lease_expired_entry
from . import runs, vendor_supplies


class JobsContract:
    #: Rows per multi-row ``INSERT`` of the default ``insert_jobs()``.
    INSERT_BATCH_ROWS = 1000

    def job_params(self, job):
        """A NewJob's parameters in the order of the vendors' ``SQL_INSERT_JOB`` rows."""
        run_at = self.db_datetime(job.run_at) if job.run_at is not None else None
        return [
            self.db_uuid(job.id), job.queue, job.task, job.args_json, job.kwargs_json,
            job.priority, run_at, self.duration_param(job.delay_seconds), job.max_attempts,
            job.unique_key, job.fingerprint, job.tags_json, job.retention_class, job.timeout,
        ]

    def job_id_conflict(self, exc, job_id=None):
        """``exc`` as ``JobIdConflict`` when it is a duplicate key; re-raised otherwise."""
        if not self.is_unique_violation(exc):
            raise exc
        if job_id is None:
            return JobIdConflict("A job id in the batch already exists.")
        return JobIdConflict(f"A job with id {job_id} already exists.", job_id=job_id)

    # -- enqueue ------------------------------------------------------------------------------

    @runs("SQL_INSERT_JOB")
    def insert_job(self, job):
        """Insert one job in the caller's transaction and wake idle workers on commit.

        Returns ``(created_at, run_at)``, or ``None`` when ``job.unique_key`` is already held by
        a hot row (nothing was written). Raises ``JobIdConflict`` for a duplicate ``id``.

        Default: ``SQL_INSERT_JOB`` with ``ON CONFLICT (unique_key) DO NOTHING RETURNING
        created_at, run_at``, so a duplicate key error can only be the primary key's.
        """
        try:
            with self.cursor() as cursor:
                cursor.execute(self.sql.SQL_INSERT_JOB, self.job_params(job))
                row = cursor.fetchone()
        except IntegrityError as exc:
            raise self.job_id_conflict(exc, job.id) from exc
        if row is None:
            return None
        return self.from_db_datetime(row[0]), self.from_db_datetime(row[1])

    @runs("SQL_INSERT_JOBS_HEAD", "SQL_INSERT_JOB_ROW")
    def insert_jobs(self, jobs):
        """Insert many jobs without unique keys in the caller's transaction, in bounded statements.

        Default: multi-row ``INSERT ... VALUES`` of ``INSERT_BATCH_ROWS`` rows. Raises
        ``JobIdConflict`` (and writes nothing) when an id already exists."""
        with self.atomic(), self.cursor() as cursor:
            for start in range(0, len(jobs), self.INSERT_BATCH_ROWS):
                chunk = jobs[start:start + self.INSERT_BATCH_ROWS]
                params = [param for job in chunk for param in self.job_params(job)]
                sql = self.sql.SQL_INSERT_JOBS_HEAD + ", ".join([self.sql.SQL_INSERT_JOB_ROW] * len(chunk))
                try:
                    cursor.execute(sql, params)
                except IntegrityError as exc:
                    raise self.job_id_conflict(exc) from exc

    @runs("SQL_MARK_UNIQUE_UNTIL_FINISHED")
    def mark_unique_until_finished(self, job_id):
        """Record on a job just inserted, in the caller's transaction, that it holds its unique
        key only until it is terminal (``unique_until = 'finished'``, jobs/unique_modes.py)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_MARK_UNIQUE_UNTIL_FINISHED, [self.db_uuid(job_id)])

    @runs("SQL_RELEASE_UNIQUE_KEY")
    def release_unique_key(self, job_id, unique_key):
        """Clear the unique key of the terminal job ``job_id`` enqueued until "finished", if it
        still holds ``unique_key``. Returns True when it did; False when nothing changed (another
        enqueue released the key first)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_RELEASE_UNIQUE_KEY, [self.db_uuid(job_id), unique_key])
            return cursor.rowcount == 1

    # -- operator actions (not fenced: they act on the current row) ---------------------------

    @runs("SQL_CANCEL", "SQL_REQUEST_ABORT")
    def cancel_job(self, job_id):
        """available or waiting -> cancelled (and the release step of its dependents,
        ``release_dependents``); running -> abort requested (``abort_requested_at`` = store
        now, kept from an earlier request; the state stays ``running``). Returns the new state
        (``cancelled`` or ``running``), or None when no row changed (finished, or no such job).

        Default: ``SQL_CANCEL ... RETURNING state``, else ``SQL_REQUEST_ABORT ... RETURNING
        state``, in one transaction."""
        with self.atomic():
            if self.fetch_state(self.sql.SQL_CANCEL, job_id) == "cancelled":
                self.release_dependents([job_id])  # workflows: its dependents, and its own edges
                self.forget_edges([job_id])
                return "cancelled"
            return self.fetch_state(self.sql.SQL_REQUEST_ABORT, job_id)

    @runs("SQL_RETRY")
    def retry_job(self, job_id):
        """dead/cancelled -> available now, with one more attempt when they were exhausted.

        Returns the new state, or None when no row changed. Default: ``SQL_RETRY ... RETURNING``."""
        return self.fetch_state(self.sql.SQL_RETRY, job_id)

    def fetch_state(self, sql, job_id):
        """Run an ``UPDATE ... RETURNING state`` on one job; the state, or None when no row changed."""
        with self.cursor() as cursor:
            cursor.execute(sql, [self.db_uuid(job_id)])
            row = cursor.fetchone()
        return row[0] if row else None

    # -- worker: claim, lease, acknowledge ----------------------------------------------------

    @vendor_supplies
    def claim_jobs(self, worker_id, queues, limit, lease_seconds):
        """Lease up to ``limit`` ready jobs (highest priority, then oldest run_at) to ``worker_id``.

        ``queues`` None means every queue. Each claimed row gets ``fence + 1``, ``attempts + 1``
        and a lease of ``lease_seconds`` from the store clock. Returns a list of ClaimedJob in
        claim order.
        """

    @runs("SQL_FAIL", "SQL_GET_STATE")
    def fail_job(self, job_id, fence, error_json, retry_delay_seconds, give_up=False):
        """Record a failed attempt (fenced): back to available after ``retry_delay_seconds``, or
        ``dead`` when attempts are exhausted or ``give_up``. ``error_json`` is an entry of
        ``store.entries``; the store adds its ``at``. Returns the new state; raises StaleLease.

        Where the vendor has ``SKIP LOCKED`` the write never waits for a row lock: a row someone
        else holds is left unchanged and StaleLease is raised (the caller tells it apart from a
        stale lease with :meth:`read_fences`). The same holds for :meth:`snooze_job` and
        :meth:`cancel_aborted_job`.

        Default: ``SQL_FAIL`` (``fragments.fail_statement``), then ``SQL_GET_STATE``, in one
        transaction."""
        params = [error_json, give_up, self.duration_param(retry_delay_seconds), give_up, give_up,
                  give_up, self.db_uuid(job_id), fence]
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(self.sql.SQL_FAIL, params)
            self.fenced(cursor, job_id, fence)
            cursor.execute(self.sql.SQL_GET_STATE, [self.db_uuid(job_id)])
            state = cursor.fetchone()[0]
            if state == "dead":
                self.release_dependents([job_id])  # workflows: in this transaction
            return state

    @runs("SQL_CANCEL_ABORTED")
    def cancel_aborted_job(self, job_id, fence):
        """End a running attempt whose abort was requested: ``cancelled`` (fenced; only while
        ``abort_requested_at`` is set). Raises StaleLease when no row changed (a row someone else
        holds is skipped, as for :meth:`fail_job`)."""
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(self.sql.SQL_CANCEL_ABORTED, [self.db_uuid(job_id), fence])
            self.fenced(cursor, job_id, fence)
            self.release_dependents([job_id])  # workflows: in this transaction

    @runs("SQL_SET_PROGRESS")
    def set_progress(self, job_id, fence, progress_json):
        """Replace the job's progress (fenced); raises StaleLease."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SET_PROGRESS, [progress_json, self.db_uuid(job_id), fence])
            self.fenced(cursor, job_id, fence)

    @runs("SQL_APPEND_OUTPUT")
    def append_output(self, job_id, fence, text, max_chars):
        """Append to the job's output, keeping the last ``max_chars`` characters (fenced)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_APPEND_OUTPUT, [text, max_chars, self.db_uuid(job_id), fence])
            self.fenced(cursor, job_id, fence)

    # -- rescue -------------------------------------------------------------------------------

    @runs("SQL_RESCUE_SELECT")
    def rescue_expired(self, limit):
        """Release up to ``limit`` running jobs whose lease has expired, oldest lapse first: back
        to available, or dead when attempts are exhausted; a ``LeaseExpired`` entry is appended
        to ``errors``. Skips rows locked by others where the vendor can. Returns the number of
        rows rescued.

        Default: ``SQL_RESCUE_SELECT`` locks ``(id, attempts, lease_owner)`` of the lapsed rows,
        then :meth:`release_rescued` writes them, and :meth:`after_jobs_left_running` frees their
        concurrency slots, in one transaction; the pass's last batch also releases held-back
        jobs whose slot freed without a release (:meth:`release_stranded_held_back`)."""
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(self.sql.SQL_RESCUE_SELECT, [limit])
            rows = cursor.fetchall()
            if rows:
                self.release_rescued(cursor, [
                    (job_id, dump_entry(lease_expired_entry(attempts, owner)))
                    for job_id, attempts, owner in rows
                ])
                rescued_ids = [self.from_db_uuid(job_id) for job_id, _, _ in rows]
                # workflows: those that ended dead release their dependents (the others are ignored)
                self.release_dependents(rescued_ids)
                self.after_jobs_left_running(self.concurrency_keys_of(cursor, rescued_ids))
            if len(rows) < limit:  # the pass's last batch
                self.release_stranded_held_back()
        return len(rows)

    @runs("SQL_RESCUE_RELEASE")
    def release_rescued(self, cursor, released):
        """Write the rescue of ``[(job_id, error_json), ...]`` (locked by the caller's select).

        Default: ``SQL_RESCUE_RELEASE`` once per row."""
        cursor.executemany(self.sql.SQL_RESCUE_RELEASE, [[error_json, job_id] for job_id, error_json in released])
