"""The worker's watchdog: liveness tied to progress (DESIGN §8a), on a thread that never touches
the database, so that it still acts when a database call hangs.

It watches the claim loop and the lease keeper, each of which records the time of its last
progress (an iteration; for the loop also each statement that returned, even with a lock or
statement timeout: a loop that backs off is alive). When either has made none for
``bound_seconds`` (a read on a half-open connection, a stopped server process: a server-side
statement timeout cannot fire there), the
watchdog fires once: it logs why at ERROR, the keeper stops renewing leases and the heartbeat
(``allows_renewal()`` turns False), and ``on_fire`` runs (the worker command exits with status
4). The jobs' leases then lapse within one lease and the rescue duty hands them to a live worker.

A suspension of the whole process (SIGSTOP, a VM pause) is not a hang: the watchdog notices that
it overslept itself and gives both a full period from the resumption.
"""

import logging
import threading
import time

logger = logging.getLogger(__name__)


class Watchdog(threading.Thread):
    def __init__(self, *, bound_seconds, progress, worker_id, on_fire):
        super().__init__(name="headgate-watchdog", daemon=True)
        self.bound_seconds = bound_seconds
        self.progress = progress  # {"claim loop": callable -> time.monotonic() of its last iteration}
        self.worker_id = worker_id
        self.on_fire = on_fire
        self.fired = threading.Event()
        self.stopped = threading.Event()

    def allows_renewal(self):
        return not self.fired.is_set()

    def run(self):
        tick = self.bound_seconds / 4
        last_tick = resumed_at = time.monotonic()
        while not self.stopped.wait(tick):
            now = time.monotonic()
            if now - last_tick > tick * 2 + 1.0:
                resumed_at = now  # this thread itself was away: the process was suspended
            last_tick = now
            for name, last_progress_at in self.progress.items():
                idle = now - max(last_progress_at(), resumed_at)
                if idle > self.bound_seconds:
                    self._fire(name, idle)
                    return

    def _fire(self, name, idle):
        self.fired.set()
        logger.error(
            "The %s made no progress for %.1f s (watchdog %.1f s): leases and the heartbeat are no "
            "longer renewed, so this worker's jobs will be rescued; the worker exits.",
            name, idle, self.bound_seconds, extra={"action": "watchdog", "worker_id": self.worker_id})
        self.on_fire()

    def stop(self):
        self.stopped.set()
