"""Retention sweep: evict expired terminal jobs from the hot table, archiving where a queue opted in.

A job is eligible when it is terminal (succeeded, dead, cancelled) and its ``expires_at`` (set
when it became terminal: finish time + its retention class's duration) has passed by the store
clock; ``forever`` jobs have none and stay. Each store call is one transaction of at most one
batch (``SWEEP.BATCH_SIZE``, default 500, 50-10,000), skipping rows locked by others where the
vendor has ``SKIP LOCKED``: rows of a queue with an archive policy are copied into
``headgate_job_archive`` and every selected row is deleted, together. Evicted job IDs and
unique keys can then be used again.

Queue storage policies change what one batch does (``run_batch``):

- ``paused``: a cleanup hold. The sweep leaves the queue's expired jobs in place until the
  policy is unpaused (claiming and running are unaffected);
- ``cleanup_batch_limit``: the queue is swept on its own, in transactions of at most that many
  rows (smaller transactions for queues with large payloads), up to the batch size of rows per
  batch, so it neither delays nor is delayed by the other queues.

A pass repeats batches until one comes back short (at most ``SWEEP.MAX_BATCHES``, pausing
``SWEEP.BATCH_PAUSE`` between two), then waits ``SWEEP.INTERVAL``. A batch stops going through
the limited queues once its ``SWEEP.BATCH_TIMEOUT`` is spent (each statement has that budget
too). A duration is a minimum: a job goes some time after it expires, not at once.
"""

import logging

from django.db.models import Q

from ..models import QueueStoragePolicy
from .duty import Duty

logger = logging.getLogger(__name__)


class RetentionSweepDuty(Duty):
    name = "retention_sweep"
    work_status = "evicted"
    settings_prefix = "sweep"

    def set_aside_queues(self):
        """Queues the shared sweep leaves alone: paused ones (a cleanup hold) and those swept on
        their own (a cleanup_batch_limit)."""
        return list(
            QueueStoragePolicy.objects.using(self.store.alias)
            .filter(Q(paused=True) | Q(cleanup_batch_limit__isnull=False))
            .values_list("queue", flat=True)
        )

    def limited_queues(self):
        """``[(queue, cleanup_batch_limit), ...]`` of the unpaused queues swept on their own."""
        return list(
            QueueStoragePolicy.objects.using(self.store.alias)
            .filter(paused=False, cleanup_batch_limit__isnull=False)
            .order_by("queue")
            .values_list("queue", "cleanup_batch_limit")
        )

    def run_batch(self, limit):
        """One batch: up to ``limit`` rows of the other queues in one transaction, then up to
        ``limit`` rows of each limited queue in transactions of its cleanup_batch_limit.

        Returns the rows evicted. The result is below ``limit`` only when every queue came back
        short, so the pass goes on while any queue may still hold expired jobs."""
        batch = self.store.sweep_expired(limit, exclude_queues=self.set_aside_queues())
        evicted, archived = batch.evicted, batch.archived
        for queue, queue_limit in self.limited_queues():
            queue_rows = 0
            while queue_rows < limit and not self.should_stop_batch():
                size = min(queue_limit, limit - queue_rows)
                batch = self.store.sweep_expired(size, queue=queue)
                queue_rows += batch.evicted
                archived += batch.archived
                if batch.evicted < size:
                    break
            evicted += queue_rows
        if evicted:
            logger.debug("Retention sweep batch: %d evicted, %d archived.", evicted, archived, extra={
                "action": "sweep_batch", "duty": self.name, "rows": evicted, "archived": archived,
            })
        return evicted
