"""Heartbeat prune: delete the rows of worker IDs not renewed for ``HEARTBEAT.RETENTION``.

Capacity housekeeping only: a heartbeat row never decides whether a job runs or a worker is
ready. One pass is exactly one bounded call (``max_batches = 1``): at most
``HEARTBEAT.PRUNE_BATCH_SIZE`` rows, oldest first, skipping rows a renewal holds, never the
caller's own ``(worker_id, instance_id)``, under a short statement time budget and the duty's
cluster-wide singleton lock. Cadence (DESIGN §8):

- a full batch: the next pass no sooner than 1 minute after this pass *started*;
- a partial or empty batch (or a contended lock): ``HEARTBEAT.PRUNE_INTERVAL`` (default 24 h);
- a failure: no sooner than 1 hour after it.

So a backlog drains at most ``batch`` rows a minute: 500 a minute is 720,000 a day.
``HEARTBEAT.ENABLED = False`` pauses the duty; workers keep renewing their rows.
"""

from .duty import Duty

#: A full batch schedules the next pass this long after the previous start.
FULL_BATCH_BACKOFF_SECONDS = 60.0
#: A failed pass schedules the next this long after it failed.
FAILURE_BACKOFF_SECONDS = 3600.0
#: Server-side time budget of one prune statement (well under the 15 s stale bound, so a
#: renewal that waits behind a prune is never delayed long enough to look stale).
PRUNE_TIMEOUT_SECONDS = 5.0


class HeartbeatPruneDuty(Duty):
    name = "heartbeat_prune"
    work_status = "deleted"
    max_batches = 1
    full_batch_backoff_seconds = FULL_BATCH_BACKOFF_SECONDS
    failure_backoff_seconds = FAILURE_BACKOFF_SECONDS
    timeout_seconds = PRUNE_TIMEOUT_SECONDS

    @classmethod
    def is_enabled(cls, conf):
        return conf.heartbeat_enabled

    @property
    def interval(self):
        return self.conf.heartbeat_prune_interval

    @property
    def batch_size(self):
        return self.conf.heartbeat_prune_batch_size

    @property
    def retention_seconds(self):
        return self.conf.heartbeat_retention

    def run_batch(self, limit):
        return self.store.prune_heartbeats(self.retention_seconds, limit, exclude=self.own_identity,
                                           timeout_seconds=self.timeout_seconds)
