"""Dashboard sample: every ``DASHBOARD.INTERVAL`` (default 1 minute) write one row per queue to
``headgate_queue_sample`` (its ready, scheduled, running and held-back jobs, and the jobs that
finished since the previous sample: succeeded, dead, and their failed attempts that were
retried), then delete the samples older than ``DASHBOARD.RETENTION`` (default 48 hours) in
bounded batches of ``DASHBOARD.BATCH_SIZE``, oldest first. The dashboard's 24-hour charts read
only these rows, so a page view never counts the hot table, and the counts outlive the retention
sweep's eviction of the jobs themselves.

A pass is one sample plus as many prune batches as it takes (the usual pass shape: a full batch
goes on after ``BATCH_PAUSE``). The outcome's rows are the sample rows written plus the rows
pruned. ``DASHBOARD.ENABLED = False`` pauses it (the charts then say no sample was taken).
"""

from datetime import timedelta

from .duty import Duty


class DashboardSampleDuty(Duty):
    name = "dashboard_sample"
    work_status = "sampled"
    settings_prefix = "dashboard"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._sample_at = None  # the pass's store-clock start, set by run_once
        self._pruned = 0  # rows the last batch pruned (the sample does not make a batch full)
        self._sampled = False

    @classmethod
    def is_enabled(cls, conf):
        return conf.dashboard_enabled

    def run_once(self, now=None):
        self._sample_at = now
        self._sampled = False
        return super().run_once(now)

    def run_batch(self, limit):
        """The first batch of a pass takes the sample; every batch prunes at most ``limit`` rows."""
        if self._sample_at is None:
            self._sample_at = self.clock()
        now, sampled = self._sample_at, 0  # every batch of the pass prunes against the same cutoff
        if not self._sampled:
            sampled = self.store.take_queue_sample(now)
            self._sampled = True  # a batch retried smaller does not sample twice
        before = now - timedelta(seconds=self.conf.dashboard_retention)
        self._pruned = self.store.prune_queue_samples(before, limit)
        return sampled + self._pruned

    def batch_was_full(self, handled, limit):
        return self._pruned >= limit
