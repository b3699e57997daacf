"""Heartbeat prune: delete the rows of worker IDs not renewed for ``HEARTBEAT.RETENTION``.

Capacity housekeeping only: a heartbeat row never decides whether a job runs or a worker is
ready. One pass is exactly one bounded call by default (``HEARTBEAT.PRUNE_MAX_BATCHES = 1``):
at most ``HEARTBEAT.PRUNE_BATCH_SIZE`` rows, oldest first, skipping rows a renewal holds, never
the caller's own ``(worker_id, instance_id)``, under a short statement time budget
(``HEARTBEAT.PRUNE_BATCH_TIMEOUT``, 5 s, below ``STALE_AFTER``) and the duty's cluster-wide
singleton lock. Cadence (DESIGN §8), with the default settings:

- a full batch: the next pass no sooner than 1 minute after this pass *started*
  (``PRUNE_FULL_BATCH_BACKOFF``);
- a partial or empty batch (or a contended lock): ``HEARTBEAT.PRUNE_INTERVAL`` (default 24 h);
- a failure: no sooner than 1 hour after it (``PRUNE_FAILURE_BACKOFF``).

So a backlog drains at most ``batch`` rows a minute: 500 a minute is 720,000 a day.
``HEARTBEAT.ENABLED = False`` pauses the duty; workers keep renewing their rows.
"""

from .duty import Duty


class HeartbeatPruneDuty(Duty):
    name = "heartbeat_prune"
    work_status = "deleted"
    settings_prefix = "heartbeat_prune"

    @classmethod
    def is_enabled(cls, conf):
        return conf.heartbeat_enabled

    @property
    def retention_seconds(self):
        return self.conf.heartbeat_retention

    def run_batch(self, limit):
        return self.store.prune_heartbeats(self.retention_seconds, limit, exclude=self.own_identity,
                                           timeout_seconds=self.batch_timeout)
