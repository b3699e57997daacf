"""Archive horizon (optional, off by default): keep the archive's monthly partitions prepared
``ARCHIVE_HORIZON.LOOKAHEAD_MONTHS`` (default 24) beyond the store clock's current month, by
running what ``manage.py headgate_archive_horizon --through`` runs. Enable it with
``HEADGATE["ARCHIVE_HORIZON"]["ENABLED"] = True`` only in a maintainer that connects with the
owner role: it runs DDL, which workers never need (DESIGN §13, §14). Cadence
``ARCHIVE_HORIZON.INTERVAL`` (default 1 day); ``ARCHIVE_HORIZON.BATCH_TIMEOUT`` (10 s) bounds the
wait for the archive's locks. A pass reports the months it created; a refusal
(a role without the privileges, a lock held elsewhere) is logged and the pass reports nothing."""

import logging

from ..archive.horizon import extend_horizon, lookahead_target
from ..store.archive_layout import prepared_layout
from ..exceptions import ArchiveHorizonRefused, UnsupportedOnVendor
from .duty import Duty

logger = logging.getLogger(__name__)


class ArchiveHorizonDuty(Duty):
    name = "archive_horizon"
    work_status = "prepared"
    settings_prefix = "archive_horizon"

    @classmethod
    def is_enabled(cls, conf):
        return conf.archive_horizon_enabled

    @property
    def batch_size(self):
        """One extension per batch (``MAX_BATCHES`` defaults to 1)."""
        return 1

    def batch_was_full(self, handled, limit):
        return False  # one extension reaches the whole look-ahead

    def run_batch(self, limit):
        """Months created in this pass (0 when the horizon already reaches far enough)."""
        if not self.store.archive_horizon.supports_layout_changes:
            return 0
        target = lookahead_target(self.conf.archive_horizon_lookahead_months, using=self.store.alias)
        layout = prepared_layout(self.store.alias)
        if layout.last_month is not None and target <= layout.last_month.key and not \
                self.store.archive_horizon.detached_edges():
            return 0
        try:
            run = extend_horizon(max(target, layout.last_month.key), using=self.store.alias,
                                 lock_timeout=self.batch_timeout)
        except (ArchiveHorizonRefused, UnsupportedOnVendor) as refusal:
            logger.warning("Archive horizon not extended (%s): %s", getattr(refusal, "reason", "unsupported"),
                           refusal.message, extra={"action": "archive_horizon_refused",
                                                   "reason": getattr(refusal, "reason", "unsupported")})
            return 0
        return len(run.created)
