"""The local buffer of claimed jobs and the job threads that take from it.

The claim loop puts claimed jobs into a :class:`ClaimBuffer` (bounded by the loop: it never
holds more leases than ``buffer_size.BufferSize`` allows), and ``concurrency`` daemon threads
take from it, so a short job never waits for a claim round trip. At a stop the jobs nobody has
started are taken back at once (:meth:`ClaimBuffer.take_unstarted`) and released.

Daemon threads (not ``ThreadPoolExecutor``) so that a worker whose shutdown timeout has passed
can exit while a job still runs: that job's lease is released and it runs again elsewhere.
"""

import threading
from collections import deque

from django.db import connections

from ..conf import MAX_RESULT_BYTES_DEFAULT, MAX_SNOOZES_DEFAULT
from .executor import run_job


class ClaimBuffer:
    """Claimed jobs not started yet, first in first out; thread-safe."""

    def __init__(self):
        self._jobs = deque()
        self._ready = threading.Condition()
        self._closed = False

    def put_all(self, jobs):
        with self._ready:
            self._jobs.extend(jobs)
            self._ready.notify(len(jobs))

    def take(self):
        """The next job, waiting for one; None once the buffer is closed and empty."""
        with self._ready:
            while not self._jobs and not self._closed:
                self._ready.wait()
            return self._jobs.popleft() if self._jobs else None

    def take_unstarted(self):
        """Remove and return every job no thread has taken yet."""
        with self._ready:
            jobs = list(self._jobs)
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
