"""Lease rescue: running jobs whose lease expired go back to available (or dead when their
attempts are exhausted). This is what finishes the work of a worker that was killed.

Settings: ``RESCUE.INTERVAL``, ``RESCUE.BATCH_SIZE`` and the pass shape shared by every duty
(``RESCUE.BATCH_PAUSE``, ``BATCH_TIMEOUT``, ``MAX_BATCHES``, ``FULL_BATCH_BACKOFF``,
``FAILURE_BACKOFF``; docs/settings.md)."""

from .duty import Duty


class RescueDuty(Duty):
    name = "rescue"
    work_status = "rescued"
    settings_prefix = "rescue"

    def run_batch(self, limit):
        return self.store.rescue_expired(limit)
