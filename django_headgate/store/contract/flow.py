"""Store contract, flow section (DESIGN §15): concurrency keys set at enqueue, the admission of
claimed jobs under their key's limit, and the release of held-back jobs when a slot frees.

A key's limit is counted over its ``running`` rows (leases, expired ones included until the
rescue releases them). Every admission and release of a key first locks the key's row in
``headgate_flow_key``, so they count one transaction at a time on PostgreSQL and MariaDB; on
SQLite the lock statement is a write, which takes the database's single writer lock.
"""

from datetime import timedelta

from ..fragments import placeholders
from . import runs

#: Held-back rows of one key read per release (at most this many become available at once).
RELEASE_SCAN_ROWS = 64


class FlowContract:
    @runs("SQL_SET_CONCURRENCY", "SQL_INSERT_FLOW_KEY")
    def set_concurrency(self, jobs):
        """Store the concurrency key and limit of NewJobs just inserted, in the caller's
        transaction (jobs without a key are left alone), and make sure each key has its lock row."""
        keyed = [job for job in jobs if job.concurrency_key is not None]
        if not keyed:
            return
        with self.cursor() as cursor:
            cursor.executemany(self.sql.SQL_SET_CONCURRENCY, [
                [job.concurrency_key, job.concurrency_limit, self.db_uuid(job.id)] for job in keyed])
        self.ensure_flow_keys({job.concurrency_key for job in keyed})

    @runs("SQL_EXISTING_FLOW_KEYS", "SQL_INSERT_FLOW_KEY")
    def ensure_flow_keys(self, keys):
        """Insert the lock rows of ``keys`` that do not exist yet. Existing rows are only read
        (no lock: an insert that meets a duplicate would lock it on MariaDB until commit)."""
        keys = sorted(keys)
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_EXISTING_FLOW_KEYS.format(keys=placeholders(len(keys))), keys)
            existing = {row[0] for row in cursor.fetchall()}
            for key in keys:
                if key not in existing:
                    cursor.execute(self.sql.SQL_INSERT_FLOW_KEY, [key])

    def hold_back_over_limit(self, worker_id, claimed):
        """Admit the ClaimedJobs this worker just leased under their keys' limits
        (:meth:`admit_claimed` without a release). Returns the set of held-back job ids."""
        return self.admit_claimed(worker_id, claimed, ())[0]

    @runs("SQL_LOCK_FLOW_KEYS", "SQL_COUNT_RUNNING_OF_KEYS", "SQL_HOLD_BACK_MANY")
    def admit_claimed(self, worker_id, claimed, freed_keys):
        """Admit the ClaimedJobs this worker just leased under their keys' limits, in one
        transaction that first locks the rows of their keys (in key order: no deadlock between
        two claims): of a key's claimed jobs, as many as the limit leaves beside the key's other
        running rows are kept (in claim order); the others become ``held_back`` (no lease, their
        attempt not counted; only rows still leased to ``worker_id``). The release of
        ``freed_keys`` (keys whose slots this worker freed since its last release,
        :meth:`release_held_back`) follows in the same transaction, on the same locks and count.
        A constant number of statements whatever the number of keys. Returns ``(held-back job
        ids, jobs released)``."""
        by_key = {}
        for job in claimed:
            if job.concurrency_key is not None:
                by_key.setdefault(job.concurrency_key, []).append(job)
        freed = {key for key in freed_keys if key is not None}
        if not by_key:
            return set(), (self.release_held_back(freed) if freed else 0)
        keys = sorted(set(by_key) | freed)
        with self.atomic(), self.cursor() as cursor:
            self._lock_flow_keys(cursor, keys, insert_missing=True)
            running = self._running_of_keys(cursor, keys)
            over = []
            for key in sorted(by_key):
                jobs = by_key[key]
                others = running.get(key, 0) - len(jobs)
                over += jobs[max(0, min(job.concurrency_limit or 1 for job in jobs) - others):]
            held = set()
            if over:
                db_ids = [self.db_uuid(job.id) for job in over]
                cursor.execute(self.sql.SQL_HOLD_BACK_MANY.format(ids=placeholders(len(db_ids))),
                               [*db_ids, worker_id])
                held = {job.id for job in over}
                if cursor.rowcount != len(over):  # some were no longer leased to this worker
                    states = self.read_fences([job.id for job in over])
                    held = {job.id for job in over if states.get(job.id, (None,))[0] == "held_back"}
                for job in over:
                    if job.id in held:
                        running[job.concurrency_key] = running.get(job.concurrency_key, 1) - 1
            released = self._release_locked(cursor, sorted(freed), running) if freed else 0
        return held, released

    @runs("SQL_LOCK_FLOW_KEYS", "SQL_EXISTING_FLOW_KEYS", "SQL_INSERT_FLOW_KEY")
    def _lock_flow_keys(self, cursor, keys, insert_missing=False):
        """Lock the rows of ``keys`` (sorted) until the transaction ends. With ``insert_missing``,
        a key whose row is missing (enqueue makes every key's row: only a row deleted since, or a
        job written around the store) gets it here, and it is locked too."""
        cursor.execute(self.sql.SQL_LOCK_FLOW_KEYS.format(keys=placeholders(len(keys))), keys)
        if insert_missing and cursor.rowcount < len(keys):
            self.ensure_flow_keys(keys)
            cursor.execute(self.sql.SQL_LOCK_FLOW_KEYS.format(keys=placeholders(len(keys))), keys)

    def _running_of_keys(self, cursor, keys):
        """``{key: running jobs}`` of ``keys`` (flow key index)."""
        cursor.execute(self.sql.SQL_COUNT_RUNNING_OF_KEYS.format(keys=placeholders(len(keys))), keys)
        return dict(cursor.fetchall())

    def after_jobs_left_running(self, concurrency_keys):
        """THE step that follows rows leaving ``running`` (acknowledged, failed, retried, snoozed,
        cancelled, released at a stop, rescued): the slots they held under ``concurrency_keys``
        are free, so held-back rows of those keys become available (:meth:`release_held_back`).
        The worker calls it right after its write commits; the rescue inside its transaction.
        Returns the number of jobs made available."""
        keys = {key for key in concurrency_keys if key is not None}
        return self.release_held_back(keys) if keys else 0

    @runs("SQL_LOCK_FLOW_KEYS", "SQL_COUNT_RUNNING_OF_KEYS")
    def release_held_back(self, keys):
        """For each key (their rows locked, in key order), make up to ``limit - running`` of its
        held-back rows available again (:meth:`_release_locked`). Returns how many."""
        keys = sorted(keys)
        with self.atomic(), self.cursor() as cursor:
            self._lock_flow_keys(cursor, keys)
            return self._release_locked(cursor, keys, self._running_of_keys(cursor, keys))

    @runs("SQL_HELD_BACK_OF_KEY", "SQL_MAKE_AVAILABLE")
    def _release_locked(self, cursor, keys, running):
        """Of ``keys`` (their rows locked by the caller's transaction; ``running``: their running
        rows), make up to ``limit - running`` held-back rows available again, highest priority
        then oldest run_at first (their ``run_at`` is kept), in a bounded number of statements
        whatever the number of keys: the first held-back row of each key (it carries the key's
        limit), then, only for keys with more than one free slot, their next rows. Returns how
        many; idle workers are woken (NOTIFY where the vendor has it, their poll elsewhere)."""
        ids, wider = [], {}
        for id_, key, limit in self._held_back_of_keys(cursor, {key: 1 for key in keys}):
            free = (limit or 1) - running.get(key, 0)
            if free == 1:
                ids.append(id_)
            elif free > 1:
                wider[key] = min(free, RELEASE_SCAN_ROWS)
        if wider:
            rows = {}
            for id_, key, limit in self._held_back_of_keys(cursor, wider):
                rows.setdefault(key, []).append((id_, limit))
            for key, held in rows.items():
                free = max(0, min(limit or 1 for _, limit in held) - running.get(key, 0))
                ids += [id_ for id_, _ in held[:free]]
        if not ids:
            return 0
        cursor.execute(self.sql.SQL_MAKE_AVAILABLE.format(ids=placeholders(len(ids))), ids)
        released = cursor.rowcount
        if released:
            self.wake_workers()  # store/contract/operations.py
        return released

    def _held_back_of_keys(self, cursor, rows_of_key):
        """``(id, key, limit)`` of the first held-back rows of each key, at most ``rows_of_key[key]``
        each, in claim order: one index-ordered read per key, in one statement (UNION ALL)."""
        cursor.execute(" UNION ALL ".join([self.sql.SQL_HELD_BACK_OF_KEY] * len(rows_of_key)),
                       [value for key, rows in sorted(rows_of_key.items()) for value in (key, rows)])
        return cursor.fetchall()

    @runs("SQL_HELD_BACK_KEYS")
    def release_stranded_held_back(self, scan_rows=RELEASE_SCAN_ROWS):
        """Release held-back jobs whose key has a free slot although no release ran for it (a
        worker died between its acknowledgement and the release): the keys of the first
        ``scan_rows`` held-back rows in claim order (claim index), each as
        :meth:`release_held_back`. The rescue runs it on each pass. Returns how many."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_HELD_BACK_KEYS, [scan_rows])
            keys = {row[0] for row in cursor.fetchall()}
        return self.release_held_back(keys) if keys else 0

    @runs("SQL_KEYS_OF_JOBS")
    def concurrency_keys_of(self, cursor, job_ids):
        """The distinct concurrency keys of some jobs (primary key), read in the caller's transaction."""
        if not job_ids:
            return set()
        cursor.execute(self.sql.SQL_KEYS_OF_JOBS.format(ids=placeholders(len(job_ids))),
                       [self.db_uuid(job_id) for job_id in job_ids])
        return {row[0] for row in cursor.fetchall()}

    @runs("SQL_LOCK_QUEUE_CONTROL", "SQL_READ_QUEUE_CONTROL", "SQL_COUNT_RUNNING_IN_QUEUE", "SQL_SET_RATE_WINDOW")
    def claim_under_queue_control(self, worker_id, queue, limit, lease_seconds, parse_rate):
        """Claim up to ``limit`` jobs of ``queue`` within its controls, in one transaction that
        locks the queue's control row (claims of one controlled queue take turns): nothing when
        it is paused; at most ``concurrency - running`` (its jobs holding a lease, all workers);
        at most what its rate window has left (``parse_rate(text) -> (count, seconds)``; a window
        opens at the first claim after the previous one closed, and counts the jobs claimed in
        it). Returns ``(claimed, seconds until the window reopens or None)``."""
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(self.sql.SQL_LOCK_QUEUE_CONTROL, [queue])
            cursor.execute(self.sql.SQL_READ_QUEUE_CONTROL, [queue])
            row = cursor.fetchone()
            if row is None or row[0]:
                return [], None
            _, concurrency, rate_limit, window_started_at, window_count = row
            if concurrency is not None:
                cursor.execute(self.sql.SQL_COUNT_RUNNING_IN_QUEUE, [queue])
                limit = min(limit, concurrency - cursor.fetchone()[0])
            if rate_limit is None:
                return (self.claim_jobs(worker_id, [queue], limit, lease_seconds) if limit > 0 else []), None
            return self._claim_in_rate_window(cursor, worker_id, queue, limit, lease_seconds, parse_rate(rate_limit),
                                              self.from_db_datetime(window_started_at), window_count)

    def _claim_in_rate_window(self, cursor, worker_id, queue, limit, lease_seconds, rate, started_at, count):
        allowed, seconds = rate
        now = self.now()
        if started_at is None or (now - started_at).total_seconds() >= seconds:
            started_at, count = now, 0
        limit = min(limit, allowed - count)
        claimed = self.claim_jobs(worker_id, [queue], limit, lease_seconds) if limit > 0 else []
        if claimed:
            count += len(claimed)
            cursor.execute(self.sql.SQL_SET_RATE_WINDOW, [self.db_datetime(started_at), count, queue])
        reopens_in = seconds - (now - started_at).total_seconds() if count >= allowed else None
        return claimed, reopens_in

    @runs("SQL_LOCK_FLOW_KEY", "SQL_READ_FLOW_WINDOW", "SQL_SET_FLOW_WINDOW", "SQL_DEFER_TO_WINDOW")
    def defer_over_rate(self, worker_id, scoped):
        """Admit claimed jobs under rate limits: ``scoped`` maps a scope (a ``headgate_flow_key``
        row, such as ``rate:<task>``) to ``((jobs, window seconds), [ClaimedJob, ...])``. In one
        transaction that locks each scope's row (in key order), as many jobs as the scope's
        window has left are kept (in claim order); a window opens at the first admission after
        the previous one closed. The others become available again at the window's end (fenced:
        no lease, attempt not counted), so nobody claims them before. Returns ``(deferred ids,
        seconds until the first window they wait for ends, or None)``."""
        self.ensure_flow_keys(scoped)
        deferred = set()
        now, reopens_in = None, None
        with self.atomic(), self.cursor() as cursor:
            for scope in sorted(scoped):
                (allowed, seconds), jobs = scoped[scope]
                cursor.execute(self.sql.SQL_LOCK_FLOW_KEY, [scope])
                now = now or self.now()  # after the first lock, as every read here
                cursor.execute(self.sql.SQL_READ_FLOW_WINDOW, [scope])
                started_at, count = cursor.fetchone()
                started_at = self.from_db_datetime(started_at)
                if started_at is None or (now - started_at).total_seconds() >= seconds:
                    started_at, count = now, 0
                kept = max(0, allowed - count)
                reopens_at = self.db_datetime(started_at + timedelta(seconds=seconds))
                for job in jobs[kept:]:
                    cursor.execute(self.sql.SQL_DEFER_TO_WINDOW, [reopens_at, self.db_uuid(job.id), job.fence])
                    if cursor.rowcount:
                        deferred.add(job.id)
                if len(jobs) > kept:
                    wait = seconds - (now - started_at).total_seconds()
                    reopens_in = wait if reopens_in is None else min(reopens_in, wait)
                cursor.execute(self.sql.SQL_SET_FLOW_WINDOW,
                               [self.db_datetime(started_at), count + min(kept, len(jobs)), scope])
        return deferred, reopens_in
