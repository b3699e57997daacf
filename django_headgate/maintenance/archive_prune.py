"""Archive prune (optional, off by default): TRUNCATE every closed archive month whose rows have
all expired. Enable with ``HEADGATE["ARCHIVE_PRUNE"]["ENABLED"] = True``; cadence
``ARCHIVE_PRUNE.INTERVAL`` (default 1 hour).

A batch looks at up to ``ARCHIVE_PRUNE.BATCH_SIZE`` closed months that hold rows (months without
rows are skipped with one probe each), oldest first, continuing where the previous batch of the
pass stopped, and sends each through :func:`~django_headgate.archive.prune_archive_month` with
all its rules (closed by the store clock, every row expired, singleton, the partition held
against writers). ``rows_not_expired`` is the normal state of a young month and is not logged as
a refusal. A pass ends when a batch found fewer months than its size; its rows are the months
pruned.
"""

import logging

from ..archive.prune import ROWS_NOT_EXPIRED, prune_archive_month
from ..store.archive_layout import prepared_layout
from ..exceptions import ArchivePruneRefused
from .duty import Duty

logger = logging.getLogger(__name__)


class ArchivePruneDuty(Duty):
    name = "archive_prune"
    work_status = "pruned"
    settings_prefix = "archive_prune"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._next_month = 0  # index in the prepared months where the next batch of this pass starts
        self._looked_at = 0  # months with rows the last batch looked at

    @classmethod
    def is_enabled(cls, conf):
        return conf.archive_prune_enabled

    def run_once(self, now=None):
        self._next_month = 0
        return super().run_once(now)

    def batch_was_full(self, handled, limit):
        return self._looked_at >= limit

    def run_batch(self, limit):
        """Prune what it can of the next ``limit`` closed months holding rows; returns the months
        pruned."""
        now_ms = self.store.archive_now_ms()
        months = prepared_layout(self.store.alias).months
        self._looked_at, pruned = 0, 0
        while self._next_month < len(months) and self._looked_at < limit and not self.should_stop_batch():
            partition = months[self._next_month]
            if partition.end_ms > now_ms:
                self._next_month = len(months)  # the rest have not ended yet
                break
            has_rows = self.store.archive_partition_has_rows(partition)
            self._next_month += 1  # after the probe: a batch run again (reduced) starts with this month
            if not has_rows:
                continue
            self._looked_at += 1
            pruned += self.prune_month(partition)
        return pruned

    def prune_month(self, partition):
        """1 when ``partition`` was pruned, 0 when a rule refused it (logged unless it is young)."""
        try:
            prune_archive_month(partition.key, using=self.store.alias, log_refusal=False)
        except ArchivePruneRefused as refusal:
            if refusal.reason != ROWS_NOT_EXPIRED:
                logger.warning("Archive month %s not pruned (%s).", partition.key, refusal.reason,
                               extra={"action": "archive_prune_refused", "reason": refusal.reason,
                                      "duty": self.name, "month": partition.key})
            return 0
        return 1
