"""One adapter per maintenance duty for the duty checklist (test_duty_checklist.py): how to make
rows it must handle and rows it must leave, where its settings live, and which table to take
away or lock to make a pass fail for real. Rows are placed by the store clock."""

import os
from dataclasses import dataclass, field
from datetime import timedelta

from django_headgate.archive_months import MONTHS
from django_headgate.maintenance.registry import DUTIES_BY_NAME
from django_headgate.models import ArchivedJob, Job, JobState
from tests.support.archive_rows import DAY_MS, archive_rows, rows_in
from tests.factories import JobFactory
from tests.support.heartbeat_rows import FRESH_AGE, make_heartbeats, remaining

HOUR = timedelta(hours=1)


@dataclass
class DutyCase:
    name: str
    section: str
    prefix: str  # of the pass-shape keys inside the section ("PRUNE_" for the heartbeat prune)
    smallest_batch: int
    defaults: dict  # duty attribute -> its default
    base_settings: dict = field(default_factory=dict)  # merged into the section (ENABLED ...)
    skip_reason: str | None = None

    @property
    def duty_class(self):
        return DUTIES_BY_NAME[self.name]

    def section_settings(self, **keys):
        """The duty's settings section with ``keys`` (``BATCH_SIZE=7``) under their real names."""
        named = {(k if k in ("INTERVAL", "ENABLED") else self.prefix + k): v for k, v in keys.items()}
        return {self.section: {**self.base_settings, **named}}

    def make_eligible(self, store, count):
        raise NotImplementedError

    def make_ineligible(self, store, count):
        raise NotImplementedError

    def eligible_left(self):
        raise NotImplementedError

    def ineligible_left(self):
        raise NotImplementedError

    def table(self, store):
        """The table the duty's batches read first (renamed away or locked by the checklist)."""
        raise NotImplementedError


PASS_SHAPE = {"batch_pause": 0.5, "batch_timeout": 10.0, "max_batches": 100,
              "full_batch_backoff_seconds": 1.0, "failure_backoff_seconds": 60.0}


class RescueCase(DutyCase):
    def make_eligible(self, store, count):
        JobFactory.create_batch(count, queue="lapsed", running_expired=True,
                                lease_expires_at=store.now() - HOUR)

    def make_ineligible(self, store, count):
        JobFactory.create_batch(count, queue="leased", running_expired=True,
                                lease_expires_at=store.now() + HOUR)

    def eligible_left(self):
        return Job.objects.filter(queue="lapsed", state=JobState.RUNNING).count()

    def ineligible_left(self):
        return Job.objects.filter(queue="leased", state=JobState.RUNNING).count()

    def table(self, store):
        return "headgate_job"


class SweepCase(DutyCase):
    def _terminal(self, store, count, queue, expires_in):
        now = store.now()
        JobFactory.create_batch(count, queue=queue, state=JobState.SUCCEEDED, finished_at=now - HOUR,
                                expires_at=now + expires_in)

    def make_eligible(self, store, count):
        self._terminal(store, count, "expired", -HOUR)

    def make_ineligible(self, store, count):
        self._terminal(store, count - count // 2, "kept", HOUR)  # not expired yet
        JobFactory.create_batch(count // 2, queue="kept")  # available: never swept

    def eligible_left(self):
        return Job.objects.filter(queue="expired").count()

    def ineligible_left(self):
        return Job.objects.filter(queue="kept").count()

    def table(self, store):
        return "headgate_job"


class HeartbeatPruneCase(DutyCase):
    def make_eligible(self, store, count):
        make_heartbeats(count, prefix="stale")

    def make_ineligible(self, store, count):
        make_heartbeats(count, age=FRESH_AGE, prefix="fresh")

    def eligible_left(self):
        return remaining("stale")

    def ineligible_left(self):
        return remaining("fresh")

    def table(self, store):
        return "headgate_worker_heartbeat"


#: Closed months (before the store clock's) used by the archive prune case: expired rows in the
#: first ones, a row kept for a century in the last.
ARCHIVE_MONTHS = MONTHS[:12]


class ArchivePruneCase(DutyCase):
    """Its unit is a month: "rows" are closed months whose archived jobs all expired."""

    def make_eligible(self, store, count):
        for month in ARCHIVE_MONTHS[:count]:
            archive_rows(month, 2)

    def make_ineligible(self, store, count):
        for month in ARCHIVE_MONTHS[-count:]:
            archive_rows(month, 1, retention_ms=36_500 * DAY_MS)

    def eligible_left(self):
        return sum(1 for month in ARCHIVE_MONTHS[:-1] if rows_in(month) and not self._kept(month))

    def ineligible_left(self):
        return sum(1 for month in ARCHIVE_MONTHS if self._kept(month))

    @staticmethod
    def _kept(month):
        return ArchivedJob.objects.filter(evicted_at_ms__gte=month.start_ms, evicted_at_ms__lt=month.end_ms,
                                          archive_retention_ms__gt=DAY_MS).exists()

    def table(self, store):
        # PostgreSQL reads each month's child table; a lock on the parent covers every child.
        return "headgate_job_archive"


CASES = [
    RescueCase("rescue", "RESCUE", "", 1, {"interval": 30.0, "batch_size": 500, **PASS_SHAPE}),
    SweepCase("retention_sweep", "SWEEP", "", 50, {"interval": 60.0, "batch_size": 500, **PASS_SHAPE}),
    HeartbeatPruneCase("heartbeat_prune", "HEARTBEAT", "PRUNE_", 1, {
        "interval": 86400.0, "batch_size": 500, **PASS_SHAPE, "batch_timeout": 5.0, "max_batches": 1,
        "full_batch_backoff_seconds": 60.0, "failure_backoff_seconds": 3600.0}),
    ArchivePruneCase("archive_prune", "ARCHIVE_PRUNE", "", 1, {
        "interval": 3600.0, "batch_size": 12, **PASS_SHAPE, "batch_timeout": 300.0},
        base_settings={"ENABLED": True},
        skip_reason=None if os.environ.get("HG_TEST_ARCHIVE_PRUNE") == "1"
        else "destructive archive prune tests need HG_TEST_ARCHIVE_PRUNE=1"),
    DutyCase("archive_horizon", "ARCHIVE_HORIZON", "", 1, {
        "interval": 86400.0, "batch_size": 1, **PASS_SHAPE, "max_batches": 1},
        base_settings={"ENABLED": True},
        skip_reason="a pass is one DDL extension of the archive, not batches of rows: "
                    "tests/worker/test_archive_horizon.py covers it (destructive, HG_TEST_ARCHIVE_PRUNE=1)"),
    # Its unit is a schedule's due tick and its settings are HEADGATE["PERIODIC"] (no section):
    # tests/worker/test_periodic_duty.py runs its checklist (only due ticks, second pass no-op,
    # contended lock, failure logged).
    DutyCase("periodic", "PERIODIC", "", 1, {},
             skip_reason="the periodic duty's checklist is tests/worker/test_periodic_duty.py"),
]
