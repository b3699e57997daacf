"""The local buffer of claimed jobs and the job threads that take from it.

The claim loop puts claimed jobs into a :class:`ClaimBuffer` (bounded by the loop: it never
holds more leases than ``buffer_size.BufferSize`` allows), and ``concurrency`` daemon threads
take from it, so a short job never waits for a claim round trip. At a stop the jobs nobody has
started are taken back at once (:meth:`ClaimBuffer.take_unstarted`) and released.

A buffered job starts only while its lease is known to be live: each has a local deadline (the
``time.monotonic()`` at which its claim or its last renewal was sent, plus the lease), which the
lease keeper moves on at each renewal. A job taken after its deadline (the process was stopped,
or starved, for longer than the lease; its lease may have lapsed and been rescued, the job even
run elsewhere) is dropped unstarted and handed to ``on_lapsed``.

Daemon threads (not ``ThreadPoolExecutor``) so that a worker whose shutdown timeout has passed
can exit while a job still runs: that job's lease is released and it runs again elsewhere.
"""

import threading
import time
from collections import deque

from django.db import connections

from ..conf import MAX_RESULT_BYTES_DEFAULT, MAX_SNOOZES_DEFAULT
from .executor import run_job


class ClaimBuffer:
    """Claimed jobs not started yet, first in first out; thread-safe. ``on_lapsed(job)`` is
    called (on the taking thread) for a job dropped because its lease was no longer known to be
    live."""

    def __init__(self, on_lapsed=lambda job: None):
        self._jobs = deque()  # [job, monotonic time its lease is known to be live until]
        self._on_lapsed = on_lapsed
        self._ready = threading.Condition()
        self._closed = False

    def put_all(self, jobs, live_until=float("inf")):
        """Add ``jobs``, whose leases are live until ``live_until`` (``time.monotonic()``)."""
        with self._ready:
            self._jobs.extend([job, live_until] for job in jobs)
            self._ready.notify(len(jobs))

    def take(self):
        """The next job whose lease is live, waiting for one; None once the buffer is closed and
        empty."""
        while True:
            with self._ready:
                while not self._jobs and not self._closed:
                    self._ready.wait()
                if not self._jobs:
                    return None
                job, live_until = self._jobs.popleft()
            if live_until > time.monotonic():
                return job
            self._on_lapsed(job)

    def renewed(self, leases, live_until):
        """The leases ``[(job_id, fence), ...]`` were renewed: live until ``live_until``."""
        leases = set(leases)
        with self._ready:
            for entry in self._jobs:
                if (entry[0].id, entry[0].fence) in leases:
                    entry[1] = max(entry[1], live_until)

    def remove(self, job_id, fence):
        """Take that job out unstarted; True when it was still waiting here."""
        with self._ready:
            kept = deque(entry for entry in self._jobs if (entry[0].id, entry[0].fence) != (job_id, fence))
            removed = len(kept) < len(self._jobs)
            self._jobs = kept
            return removed

    def take_unstarted(self):
        """Remove and return every job no thread has taken yet."""
        with self._ready:
            jobs = [job for job, _ in self._jobs]
            self._jobs.clear()
            return jobs

    def close(self):
        """Wake every waiting thread; ``take()`` returns None from now on when empty."""
        with self._ready:
            self._closed = True
            self._ready.notify_all()

    def __len__(self):
        return len(self._jobs)


class JobThreads:
    """``concurrency`` daemon threads running the buffer's jobs; ``on_start(job)`` when one
    begins, ``on_done(outcome)`` when it ends (both called on the job's thread)."""

    def __init__(self, concurrency, buffer, store, worker_id, output_max_chars, on_start, on_done,
                 max_snoozes=MAX_SNOOZES_DEFAULT, stopping=frozenset(),
                 max_result_bytes=MAX_RESULT_BYTES_DEFAULT):
        self._buffer = buffer
        self._max_snoozes = max_snoozes
        self._max_result_bytes = max_result_bytes
        self._stopping = stopping  # (job_id, fence) whose abort is requested (control.py)
        self._store = store
        self._worker_id = worker_id
        self._output_max_chars = output_max_chars
        self._on_start = on_start
        self._on_done = on_done
        self._threads = [
            threading.Thread(target=self._serve, name=f"headgate-job-{n}", daemon=True)
            for n in range(concurrency)
        ]
        for thread in self._threads:
            thread.start()

    def _serve(self):
        try:
            while True:
                claimed = self._buffer.take()
                if claimed is None:
                    return
                self._on_start(claimed)
                self._on_done(run_job(claimed, self._store, self._worker_id, self._output_max_chars,
                                      self._max_snoozes, self._stopping, self._max_result_bytes))
        finally:
            connections.close_all()  # this thread's connections (the tasks' own)

    def stop(self):
        """Let idle threads exit; busy ones finish their job first (they are daemons)."""
        self._buffer.close()
