"""The store contract: one documented method per operation, and capability flags.

A vendor module (``postgresql.py``, ``mysql.py``, ``sqlite.py``) subclasses :class:`BaseStore`,
holds its SQL as named module constants and implements the abstract methods. Callers never
test the vendor: they read the ``supports_*`` flags, and a missing feature raises
``UnsupportedOnVendor``.

Rules every implementation keeps:
- times come from the database clock (``now()`` / ``UTC_TIMESTAMP(6)`` / ``strftime('now')``);
- every worker write is fenced by ``(id, fence)`` and ``state = 'running'``; a write that matches
  no row raises ``StaleLease`` and changes nothing;
- values are bound parameters; identifiers come from closed sets in this package.
"""

import hashlib
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, connections, transaction
from django.db.models import UUIDField

from ..exceptions import JobIdConflict, StaleLease, UnsupportedOnVendor


@dataclass(frozen=True, slots=True)
class NewJob:
    """A validated job ready to insert; JSON fields are already serialised text."""

    id: object
    queue: str
    task: str
    args_json: str
    kwargs_json: str
    priority: int
    run_at: datetime | None  # absolute start time, or None for now + delay_seconds
    delay_seconds: float
    max_attempts: int
    unique_key: str | None
    fingerprint: str
    tags_json: str
    retention_class: str


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    """A job this worker now leases. ``attempt`` counts this run; ``fence`` guards its writes."""

    id: object
    queue: str
    task: str
    args_json: str
    kwargs_json: str
    attempt: int
    max_attempts: int
    fence: int


@dataclass(frozen=True, slots=True)
class Completion:
    """A successful run to acknowledge: result is JSON text or None."""

    job_id: object
    fence: int
    result_json: str | None


@dataclass(frozen=True, slots=True)
class SweepBatch:
    """One retention sweep transaction: hot rows deleted, and how many of them were archived."""

    evicted: int
    archived: int


def placeholders(count):
    """``%s, %s, ...`` for an IN list of ``count`` values (built from a count, never from input)."""
    return ", ".join(["%s"] * count)


def lock_key(name):
    """A stable signed 64-bit key for an advisory lock name (PostgreSQL takes a bigint)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class BaseStore:
    """Contract for one database alias. Subclasses set ``vendor`` and implement every operation."""

    vendor = None
    #: Claims skip rows locked by other workers (``FOR UPDATE SKIP LOCKED``).
    supports_skip_locked = False
    #: Idle workers can be woken by ``LISTEN``/``NOTIFY``.
    supports_listen_notify = False
    #: Advisory locks are held cluster-wide (not just inside this process).
    supports_cluster_locks = False

    def __init__(self, alias):
        self.alias = alias
        self._uuid_field = UUIDField()

    @property
    def connection(self):
        return connections[self.alias]

    def cursor(self):
        return self.connection.cursor()

    def atomic(self):
        return transaction.atomic(using=self.alias)

    # -- value conversion at the driver boundary ---------------------------------------------

    def db_uuid(self, value):
        return self._uuid_field.get_db_prep_value(value, self.connection)

    def db_datetime(self, value):
        return self.connection.ops.adapt_datetimefield_value(value)

    def duration_param(self, seconds):
        """A duration as the vendor's SQL adds it to the store clock (seconds by default)."""
        return seconds

    def job_params(self, job):
        """A NewJob's parameters in the order of the vendors' ``SQL_INSERT_JOB`` rows."""
        run_at = self.db_datetime(job.run_at) if job.run_at is not None else None
        return [
            self.db_uuid(job.id), job.queue, job.task, job.args_json, job.kwargs_json,
            job.priority, run_at, self.duration_param(job.delay_seconds), job.max_attempts,
            job.unique_key, job.fingerprint, job.tags_json, job.retention_class,
        ]

    def from_db_uuid(self, value):
        return self._uuid_field.to_python(value)

    def from_db_datetime(self, value):
        """Driver value of a datetime column -> aware datetime (PostgreSQL needs nothing)."""
        return value

    @staticmethod
    def stale_lease(job_id, fence):
        return StaleLease(f"Job {job_id}: fence {fence} is stale; the write was rejected.",
                          job_id=job_id, fence=fence)

    def fenced(self, cursor, job_id, fence):
        """Raise StaleLease when the fenced statement just executed matched no row."""
        if cursor.rowcount == 0:
            raise self.stale_lease(job_id, fence)

    # -- clock --------------------------------------------------------------------------------

    def now(self):
        """The store clock: the database's current UTC time as an aware datetime."""
        with self.cursor() as cursor:
            cursor.execute(self.SQL_NOW, [])  # a parameter list, even empty: see sqlite.NOW
            return self.from_db_datetime(cursor.fetchone()[0])

    # -- enqueue ------------------------------------------------------------------------------

    def insert_job(self, job):
        """Insert one job in the caller's transaction and wake idle workers on commit.

        Returns ``(created_at, run_at)``, or ``None`` when ``job.unique_key`` is already held by
        a hot row (nothing was written). Raises ``JobIdConflict`` for a duplicate ``id``.
        """
        raise NotImplementedError("subclasses of BaseStore must provide insert_job()")

    def insert_jobs(self, jobs):
        """Insert many jobs without unique keys in the caller's transaction, in bounded statements.

        Default: multi-row ``INSERT ... VALUES`` of ``INSERT_BATCH_ROWS`` rows built from the
        vendor's ``SQL_INSERT_JOBS_HEAD`` / ``SQL_INSERT_JOB_ROW`` and ``job_params()``."""
        with self.atomic(), self.cursor() as cursor:
            for start in range(0, len(jobs), self.INSERT_BATCH_ROWS):
                chunk = jobs[start:start + self.INSERT_BATCH_ROWS]
                params = []
                for job in chunk:
                    params += self.job_params(job)
                sql = self.SQL_INSERT_JOBS_HEAD + ", ".join([self.SQL_INSERT_JOB_ROW] * len(chunk))
                try:
                    cursor.execute(sql, params)
                except IntegrityError as exc:
                    raise JobIdConflict("A job id in the batch already exists.") from exc

    # -- operator actions (not fenced: they act on the current row) ---------------------------

    def cancel_job(self, job_id):
        """available/running -> cancelled. Returns the new state, or None when no row changed."""
        raise NotImplementedError("subclasses of BaseStore must provide cancel_job()")

    def retry_job(self, job_id):
        """dead/cancelled -> available now, with one more attempt when they were exhausted.

        Returns the new state, or None when no row changed."""
        raise NotImplementedError("subclasses of BaseStore must provide retry_job()")

    def get_job_state(self, job_id):
        """The job's state, or None when no hot row has this id."""
        with self.cursor() as cursor:
            cursor.execute(self.SQL_GET_STATE, [self.db_uuid(job_id)])
            row = cursor.fetchone()
        return row[0] if row else None

    # -- worker: claim, lease, acknowledge ----------------------------------------------------

    def claim_jobs(self, worker_id, queues, limit, lease_seconds):
        """Lease up to ``limit`` ready jobs (highest priority, then oldest run_at) to ``worker_id``.

        ``queues`` None means every queue. Each claimed row gets ``fence + 1``, ``attempts + 1``
        and a lease of ``lease_seconds`` from the store clock. Returns a list of ClaimedJob.
        """
        raise NotImplementedError("subclasses of BaseStore must provide claim_jobs()")

    def renew_leases(self, worker_id, leases, lease_seconds):
        """Extend the leases ``[(job_id, fence), ...]`` still held; return the set of renewed ids.

        Default: one fenced ``SQL_RENEW`` per lease, in one transaction."""
        renewed = set()
        with self.atomic(), self.cursor() as cursor:
            for job_id, fence in leases:
                cursor.execute(self.SQL_RENEW, [self.duration_param(lease_seconds), self.db_uuid(job_id),
                                                fence, worker_id])
                if cursor.rowcount:
                    renewed.add(job_id)
        return renewed

    def complete_jobs(self, completions):
        """Mark each Completion succeeded (fenced). Returns the set of accepted job ids; the
        others were stale and changed nothing.

        Default: one fenced ``SQL_COMPLETE`` per job, in one transaction."""
        accepted = set()
        with self.atomic(), self.cursor() as cursor:
            for done in completions:
                cursor.execute(self.SQL_COMPLETE, [done.result_json, self.db_uuid(done.job_id), done.fence])
                if cursor.rowcount:
                    accepted.add(done.job_id)
        return accepted

    def fail_job(self, job_id, fence, error_json, retry_delay_seconds, give_up=False):
        """Record a failed attempt (fenced): back to available after ``retry_delay_seconds``, or
        ``dead`` when attempts are exhausted or ``give_up``. Returns the new state; raises StaleLease."""
        raise NotImplementedError("subclasses of BaseStore must provide fail_job()")

    def set_progress(self, job_id, fence, progress_json):
        """Replace the job's progress (fenced); raises StaleLease."""
        with self.cursor() as cursor:
            cursor.execute(self.SQL_SET_PROGRESS, [progress_json, self.db_uuid(job_id), fence])
            self.fenced(cursor, job_id, fence)

    def append_output(self, job_id, fence, text, max_chars):
        """Append to the job's output, keeping the last ``max_chars`` characters (fenced)."""
        with self.cursor() as cursor:
            cursor.execute(self.SQL_APPEND_OUTPUT, [text, max_chars, self.db_uuid(job_id), fence])
            self.fenced(cursor, job_id, fence)

    # -- maintenance --------------------------------------------------------------------------

    def rescue_expired(self, limit):
        """Release up to ``limit`` running jobs whose lease has expired: back to available, or
        dead when attempts are exhausted; the lapse is recorded in ``errors``. Skips rows locked
        by others where the vendor can. Returns the number of rows rescued."""
        raise NotImplementedError("subclasses of BaseStore must provide rescue_expired()")

    def lock_param(self, name):
        """The advisory lock's identifier as the vendor's SQL takes it (the name by default)."""
        return name

    @contextmanager
    def singleton_lock(self, name):
        """Try, without waiting, to take the cluster-wide lock ``name``; yield True if taken.

        Default: the vendor's ``SQL_TRY_LOCK`` / ``SQL_UNLOCK`` on this thread's connection."""
        key = self.lock_param(name)
        with self.cursor() as cursor:
            cursor.execute(self.SQL_TRY_LOCK, [key])
            taken = bool(cursor.fetchone()[0])  # GET_LOCK gives NULL on error: not taken
        try:
            yield taken
        finally:
            if taken:
                with self.cursor() as cursor:
                    cursor.execute(self.SQL_UNLOCK, [key])

    # -- worker heartbeats --------------------------------------------------------------------

    def register_heartbeat(self, worker_id, instance_id, hostname, pid, queues_json):
        """Create or take over the heartbeat row of ``worker_id`` for this process instance."""
        with self.cursor() as cursor:
            cursor.execute(self.SQL_REGISTER_HEARTBEAT,
                           [worker_id, self.db_uuid(instance_id), hostname, pid, queues_json])

    def renew_heartbeat(self, worker_id, instance_id):
        """Touch our heartbeat row; False when it is gone or owned by another instance."""
        with self.cursor() as cursor:
            cursor.execute(self.SQL_RENEW_HEARTBEAT, [worker_id, self.db_uuid(instance_id)])
            return cursor.rowcount == 1

    def delete_heartbeat(self, worker_id, instance_id):
        """Remove our own heartbeat row on a clean exit."""
        with self.cursor() as cursor:
            cursor.execute(self.SQL_DELETE_HEARTBEAT, [worker_id, self.db_uuid(instance_id)])

    # -- heartbeat prune ----------------------------------------------------------------------

    def prune_heartbeats(self, retention_seconds, limit, exclude=None, timeout_seconds=5.0):
        """Delete at most ``limit`` heartbeat rows whose ``last_heartbeat_at`` is older than
        store now minus ``retention_seconds``, oldest first (``headgate_heartbeat_last_idx``).

        ``exclude`` is the caller's own ``(worker_id, instance_id)``: that exact row is never
        deleted. Rows locked by someone else (a renewal in flight) are skipped where the vendor
        has ``SKIP LOCKED``. The statement runs under a server-side time budget of
        ``timeout_seconds`` (PostgreSQL ``statement_timeout``, MariaDB ``max_statement_time``,
        MySQL ``MAX_EXECUTION_TIME``; SQLite has none); running over raises ``DatabaseError``.
        Returns the number of rows deleted. Callers hold the duty's ``singleton_lock``.
        """
        raise NotImplementedError("subclasses of BaseStore must provide prune_heartbeats()")

    def listen_for_jobs(self, wake, stop):
        """Blocking wake-up loop for a listener thread (only where ``supports_listen_notify``)."""
        raise UnsupportedOnVendor(f"LISTEN/NOTIFY is not available on {self.vendor}.", vendor=self.vendor)

    # -- retention sweep and archive ----------------------------------------------------------

    #: ``archive_row_estimates()`` returns exact counts (True), or catalogue estimates.
    archive_counts_are_exact = False

    def sweep_expired(self, limit, queue=None):
        """Evict up to ``limit`` expired terminal jobs in ONE transaction; return a SweepBatch.

        Eligible rows: ``state`` terminal (succeeded, dead, cancelled) and ``expires_at <=`` store
        now, oldest expiry first (``headgate_job_expires_idx``); rows locked by others are skipped
        where the vendor has ``SKIP LOCKED``. Non-terminal rows are never touched. With ``queue``,
        only that queue's rows; without, every queue except those whose storage policy is
        ``paused`` or sets a ``cleanup_batch_limit`` (the sweep duty takes those one by one).
        Rows whose queue has an archive policy are first copied into ``headgate_job_archive``
        with ``evicted_at_ms`` = store now in milliseconds and ``archive_retention_ms`` = that
        policy; then every selected row is deleted. Copy and delete commit together or not at all.
        """
        raise NotImplementedError("subclasses of BaseStore must provide sweep_expired()")

    def archive_now_ms(self):
        """The store clock as integer milliseconds since the Unix epoch (as ``evicted_at_ms``)."""
        raise NotImplementedError("subclasses of BaseStore must provide archive_now_ms()")

    def archive_partition_has_rows(self, partition):
        """True when the archive partition holds at least one row (reads one row at most)."""
        raise NotImplementedError("subclasses of BaseStore must provide archive_partition_has_rows()")

    def archive_partition_has_unexpired(self, partition, now_ms):
        """True when a row of the partition has ``expires_at_ms > now_ms``: one probe of
        ``headgate_archive_expires_idx`` within that partition."""
        raise NotImplementedError("subclasses of BaseStore must provide archive_partition_has_unexpired()")

    @contextmanager
    def archive_partition_locked(self, partition, timeout_seconds=10.0):
        """Hold the partition against concurrent writers for the body of the ``with``.

        On entry, sweep transactions already writing into it have committed (their rows are
        visible) and new ones wait until the exit, so a check made inside stays true until a
        truncate made inside. Waits at most ``timeout_seconds`` for the lock, then raises
        ``ArchivePruneRefused(reason="locked")``.
        """
        raise NotImplementedError("subclasses of BaseStore must provide archive_partition_locked()")
        yield  # pragma: no cover

    def truncate_archive_partition(self, partition):
        """Remove every row of a monthly partition at once (PostgreSQL ``TRUNCATE TABLE`` of the
        child, MySQL ``ALTER TABLE ... TRUNCATE PARTITION``, SQLite a DELETE of the month's range).
        Call it inside :meth:`archive_partition_locked`; the eligibility rules are the caller's."""
        raise NotImplementedError("subclasses of BaseStore must provide truncate_archive_partition()")

    def archive_row_estimates(self):
        """``{partition key: rows}`` for every archive partition: the catalogue's estimate where
        an exact count is costly (None when the database has no estimate yet)."""
        raise NotImplementedError("subclasses of BaseStore must provide archive_row_estimates()")

    @staticmethod
    def check_archive_partition(partition):
        """Return ``partition`` if it is one of the frozen archive partitions, else raise
        ValueError: identifiers in archive SQL come from that closed set only."""
        from ..archive_months import PARTITIONS

        if partition not in PARTITIONS:
            raise ValueError(f"{partition!r} is not an archive partition.")
        return partition
