"""Store contract, worker section (DESIGN §8a): acknowledge and claim in one round trip where the
vendor allows, lock-free renewal, fence reads, release without spending the attempt (at a stop,
or by a snooze), and the plan settings of the worker's own connections (their time budget is
``statement_budget``)."""

from ..fragments import placeholders
from . import runs, vendor_supplies


class WorkerContract:
    @vendor_supplies
    def acknowledge_and_claim(self, completions, worker_id, queues, limit, lease_seconds):
        """Mark each Completion ``succeeded`` with its result (fenced: only an attempt still
        ``running`` at that fence; a second acknowledgement changes nothing) and claim up to
        ``limit`` ready jobs (as :meth:`claim_jobs`; none when ``limit`` is 0) in as few round
        trips as the vendor allows, committed together. Returns ``(accepted job ids,
        [ClaimedJob, ...])``; the ids not accepted were stale (or locked) and changed nothing.

        Where the vendor has ``SKIP LOCKED`` an acknowledgement never waits for a row lock: a
        row someone else holds is left unchanged and not in the accepted set (the caller tells
        it apart from a stale one with :meth:`read_fences`).
        """

    @vendor_supplies
    def renew_unlocked_leases(self, worker_id, leases, lease_seconds):
        """Extend the leases ``[(job_id, fence), ...]`` still held, skipping rows someone else
        has locked where the vendor can (renewal then never waits and never deadlocks with an
        acknowledgement). Returns ``{renewed job id: abort requested}``: the same statement tells
        the worker which of its jobs ``cancel()`` asked to stop (no extra query)."""

    @runs("SQL_READ_FENCES")
    def read_fences(self, job_ids):
        """``{job_id: (state, fence)}`` of the hot rows among ``job_ids``, read without locking
        (a missing id has no hot row). Default: ``SQL_READ_FENCES`` with an IN list."""
        if not job_ids:
            return {}
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_READ_FENCES.format(ids=placeholders(len(job_ids))),
                           [self.db_uuid(job_id) for job_id in job_ids])
            return {self.from_db_uuid(id_): (state, fence) for id_, state, fence in cursor.fetchall()}

    @runs("SQL_RELEASE")
    def release_jobs(self, worker_id, leases):
        """Give back leases ``[(job_id, fence), ...]`` this worker holds without spending their
        attempt: ``running`` -> ``available``, ``attempts - 1``, lease cleared, ``run_at`` kept
        (the job keeps its place in the claim order). Fenced; returns the set of released ids.

        Default: one fenced ``SQL_RELEASE`` per lease, in one transaction."""
        released = set()
        with self.atomic(), self.cursor() as cursor:
            for job_id, fence in leases:
                cursor.execute(self.sql.SQL_RELEASE, [self.db_uuid(job_id), fence, worker_id])
                if cursor.rowcount:
                    released.add(job_id)
        return released

    @runs("SQL_SNOOZE")
    def snooze_job(self, job_id, fence, delay_seconds):
        """A running job snoozes (fenced, as an acknowledgement): ``available`` at the store clock
        + ``delay_seconds``, ``attempts - 1`` (this run is not counted), ``snoozes + 1``, lease
        and ``started_at`` cleared; ``errors`` and ``fence`` unchanged (the next claim moves the
        fence). Raises StaleLease when the fence moved or the job no longer runs, and where the
        vendor has ``SKIP LOCKED`` when someone else holds the row (as for :meth:`fail_job`).

        Default: ``SQL_SNOOZE`` (``fragments.SNOOZE``)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SNOOZE, [self.duration_param(delay_seconds), self.db_uuid(job_id), fence])
            self.fenced(cursor, job_id, fence)

    def set_worker_plan(self):
        """Session settings the worker's own connections need for their plans, beside their
        :meth:`statement_budget`: none by default (PostgreSQL turns bitmap and sequential scans
        off, so that the claim's plan does not depend on fresh statistics)."""

    def reset_worker_plan(self):
        """Undo :meth:`set_worker_plan` on this thread's connection."""

    def bound_idle_transactions(self, seconds):
        """End this thread's session when one of its transactions stays idle (open, no statement
        running) longer than ``seconds``, and so give its row locks back: a process frozen in the
        middle of a transaction (SIGSTOP, a paused VM) must not hold the rows it locked past its
        lease. ``None`` puts the server's default back. PostgreSQL
        ``idle_in_transaction_session_timeout``, MariaDB ``idle_transaction_timeout``; MySQL 8 and
        SQLite have no such bound (a no-op), nor does a transaction-pooled connection (no session
        setting survives a transaction there)."""

    def name_session(self, name):
        """Label this thread's connection ``name`` in the server's session list, unless the host
        named it already (PostgreSQL ``application_name``; other vendors have no such label)."""
