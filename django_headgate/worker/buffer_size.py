"""How many leases a worker holds (DESIGN §8a): ``BUFFER_PER_THREAD x concurrency`` at least,
more while its jobs are short, up to ``BUFFER_MAX_PER_THREAD x concurrency``.

Each round trip acknowledges what finished and claims about a buffer's worth of jobs, so for
jobs much shorter than a round trip the buffer, not the database, bounds the drain: 10,000
no-op jobs drained about 1.6 times faster with 64 leases than with 16 (docs/benchmarks.md). A
buffered job waits for the ones ahead of it, so the buffer grows only as far as that wait stays
under ``SHORT_WAIT_SECONDS``: a worker of long jobs never holds more than the minimum away from
idle workers.
"""

#: The longest a job claimed beyond the minimum should wait in the buffer for a thread.
SHORT_WAIT_SECONDS = 0.05
#: Weight of the newest run in the moving mean of run times.
SMOOTHING = 0.1


class BufferSize:
    """The buffer's size from the mean run time of this worker's jobs; ``observe()`` is called
    on job threads (a lost update of the mean is harmless)."""

    def __init__(self, concurrency, per_thread, max_per_thread):
        self.concurrency = concurrency
        self.minimum = per_thread * concurrency
        self.maximum = max(per_thread, max_per_thread) * concurrency
        self._mean_seconds = None  # no job has run yet: the minimum

    @classmethod
    def fixed(cls, size):
        return cls(1, size, size)

    def observe(self, seconds):
        mean = self._mean_seconds
        self._mean_seconds = seconds if mean is None else mean + (seconds - mean) * SMOOTHING

    @property
    def current(self):
        mean = self._mean_seconds
        if mean is None or self.minimum == self.maximum:
            return self.minimum
        if mean <= 0:
            return self.maximum
        return max(self.minimum, min(self.maximum, int(self.concurrency * SHORT_WAIT_SECONDS / mean)))

    def describe(self):
        return str(self.minimum) if self.minimum == self.maximum else f"{self.minimum}-{self.maximum}"
