"""Archive prune (optional, off by default): TRUNCATE every closed archive month whose rows have
all expired. Enable with ``HEADGATE["ARCHIVE_PRUNE"]["ENABLED"] = True``; cadence
``ARCHIVE_PRUNE.INTERVAL`` (default 1 hour). Each month goes through ``prune_archive_month`` with
all its rules (closed by the store clock, every row expired, singleton)."""

from ..archive import prune_expired_months
from ..archive_months import MONTHS
from .duty import Duty


class ArchivePruneDuty(Duty):
    name = "archive_prune"
    work_status = "pruned"
    max_batches = 1

    @classmethod
    def is_enabled(cls, conf):
        return conf.archive_prune_enabled

    @property
    def interval(self):
        return self.conf.archive_prune_interval

    @property
    def batch_size(self):
        return len(MONTHS)

    def run_batch(self, limit):
        """Months pruned in this pass (one pass looks at every closed month)."""
        return len(prune_expired_months(using=self.store.alias))
