"""One adapter per maintenance duty for the duty checklist (test_duty_checklist.py): how to make
what it must handle ("eligible") and what it must leave, where its settings live, which table to
take away or lock to make a pass fail for real, and where the checklist's shape does not fit the
duty (then the item is skipped with that reason). Rows are placed by the store clock.

A duty's unit is not always a row: the archive prune counts months, the archive horizon prepares
whole years (12 months each), the periodic duty enqueues due ticks. The archive cases change the
archive of this run's own test database (TRUNCATE of a month, new partitions); the horizon case
puts the frozen layout back after every test."""

from dataclasses import dataclass, field
from datetime import timedelta

from django_headgate.store.archive_layout import MONTHS, forget_prepared_layout, month_of_ms, prepared_layout
from django_headgate.maintenance.registry import DUTIES_BY_NAME
from django_headgate.models import ArchivedJob, Job, JobState, PeriodicTick, QueueSample
from tests.factories import JobFactory
from tests.support.archive_layout import restore_frozen_layout
from tests.support.archive_rows import DAY_MS, archive_rows, rows_in
from tests.support.heartbeat_rows import FRESH_AGE, make_heartbeats, remaining
from tests.support.periodic import EVERY_MINUTE

HOUR = timedelta(hours=1)
ONE_BATCH = "a pass is one batch"


@dataclass
class DutyCase:
    name: str
    section: str
    prefix: str  # of the pass-shape keys inside the section ("PRUNE_" for the heartbeat prune)
    smallest_batch: int
    defaults: dict  # duty attribute -> its default
    base_settings: dict = field(default_factory=dict)  # merged into the section (ENABLED ...)
    #: Why a pass of this duty is one batch (the items about several batches are skipped), or None.
    one_batch: str | None = None
    #: Vendors on which a per-row slowdown makes one statement of a batch run over its budget.
    slowed_by_rows: tuple = ("postgresql", "mysql")
    #: The pytest-django ``settings`` of the running test (the checklist binds it).
    settings: object = None

    def __post_init__(self):
        """Per-test state of a case starts here (the checklist copies the case for each test)."""

    @property
    def duty_class(self):
        return DUTIES_BY_NAME[self.name]

    def section_settings(self, **keys):
        """The duty's settings section with ``keys`` (``BATCH_SIZE=7``) under their real names."""
        named = {(k if k in ("INTERVAL", "ENABLED") else self.prefix + k): v for k, v in keys.items()}
        return {self.section: {**self.base_settings, **named}}

    def adjust(self, duty):
        """Give a duty without a settings section the pass shape the test configured."""

    def rows(self, count):
        """What an outcome counts for ``count`` eligible units."""
        return count

    def make_eligible(self, store, count):
        raise NotImplementedError

    def make_ineligible(self, store, count):
        raise NotImplementedError

    def eligible_left(self):
        raise NotImplementedError

    def ineligible_left(self):
        raise NotImplementedError

    def table(self, store):
        """The table the duty's batches read first (locked by the checklist)."""
        raise NotImplementedError

    def broken_table(self, store):
        """The table renamed away to make a pass fail."""
        return self.table(store)

    def cleanup(self):
        """Undo what the test changed beyond rows (the flush between tests takes the rows)."""


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

    def broken_table(self, store):
        # A child renamed away on PostgreSQL (the parent would take every month with it).
        return "headgate_job_archive_202501" if store.vendor == "postgresql" else "headgate_job_archive"


class ArchiveHorizonCase(DutyCase):
    """Its unit is a year of months beyond the prepared horizon: eligible years are those the
    look-ahead reaches (``LOOKAHEAD_MONTHS`` is set to reach December of the last one); the
    months already prepared are what it must leave."""

    def __post_init__(self):
        self.target_year, self.kept = None, ()

    def rows(self, count):
        return 12 * count

    def make_eligible(self, store, count):
        if not store.archive_horizon.supports_layout_changes:
            import pytest

            pytest.skip("SQLite keeps the archive in one plain table: there is no horizon to prepare.")
        year, month = month_of_ms(store.archive_now_ms())
        self.target_year = month_of_ms(prepared_layout().last_month.start_ms)[0] + count
        lookahead = (self.target_year * 12 + 11) - (year * 12 + month - 1)
        section = {**self.settings.HEADGATE.get(self.section, {}), "LOOKAHEAD_MONTHS": lookahead}
        self.settings.HEADGATE = {**self.settings.HEADGATE, self.section: section}

    def make_ineligible(self, store, count):
        self.kept = prepared_layout().months[-count:]

    def eligible_left(self):
        forget_prepared_layout()
        return max(0, self.target_year - month_of_ms(prepared_layout().last_month.start_ms)[0])

    def ineligible_left(self):
        forget_prepared_layout()
        return sum(1 for month in self.kept if month in prepared_layout().months)

    def table(self, store):
        return "headgate_job_archive"

    def cleanup(self):
        if self.target_year is not None:
            restore_frozen_layout()


class PeriodicCase(DutyCase):
    """Its unit is a schedule with a due tick: an every-minute schedule whose cursor was first
    seen five minutes ago. A schedule first seen at the store clock's now has none yet. Its pass
    shape is fixed (no settings section): the test's keys go onto the duty itself."""

    def __post_init__(self):
        self.schedules, self.pass_shape = {"idle": EVERY_MINUTE}, {}

    def section_settings(self, **keys):
        self.pass_shape.update(keys)
        return {"PERIODIC": dict(self.schedules)}

    def adjust(self, duty):
        attributes = {"BATCH_TIMEOUT": "batch_timeout", "FAILURE_BACKOFF": "failure_backoff_seconds"}
        for key, value in self.pass_shape.items():
            setattr(duty, attributes[key], value)

    def _schedules(self, store, count, prefix, first_seen_at):
        names = [f"{prefix}{n}" for n in range(count)]
        self.schedules.update({name: {**EVERY_MINUTE, "queue": prefix} for name in names})
        PeriodicTick.objects.bulk_create([PeriodicTick(name=name, first_seen_at=first_seen_at) for name in names])
        self.settings.HEADGATE = {**self.settings.HEADGATE, "PERIODIC": dict(self.schedules)}

    def make_eligible(self, store, count):
        self._schedules(store, count, "due", store.now() - timedelta(minutes=5))

    def make_ineligible(self, store, count):
        self._schedules(store, count, "later", store.now())

    def eligible_left(self):
        return self._without_job("due")

    def ineligible_left(self):
        return self._without_job("later")

    def _without_job(self, prefix):
        enqueued = set(Job.objects.filter(queue=prefix).values_list("unique_key", flat=True))
        names = [name for name in self.schedules if name.startswith(prefix)]
        return sum(1 for name in names if not any(key.startswith(f"periodic:{name}:") for key in enqueued))

    def table(self, store):
        return "headgate_periodic_tick"


class DashboardSampleCase(DutyCase):
    """Its unit is a sample row past ``DASHBOARD.RETENTION`` (48 h); with no job in the table a
    pass's sample writes nothing, so the rows an outcome counts are the pruned ones."""

    def _samples(self, store, count, queue, age):
        at = store.now() - age
        QueueSample.objects.bulk_create([QueueSample(sampled_at=at, queue=queue, available=n) for n in range(count)])

    def make_eligible(self, store, count):
        self._samples(store, count, "old", timedelta(hours=49))

    def make_ineligible(self, store, count):
        self._samples(store, count, "fresh", timedelta(hours=47))

    def eligible_left(self):
        return QueueSample.objects.filter(queue="old").count()

    def ineligible_left(self):
        return QueueSample.objects.filter(queue="fresh").count()

    def table(self, store):
        return "headgate_queue_sample"


CASES = [
    RescueCase("rescue", "RESCUE", "", 1, {"interval": 30.0, "batch_size": 500, **PASS_SHAPE},
               # MySQL/MariaDB release each rescued row with a statement of its own.
               slowed_by_rows=("postgresql",)),
    SweepCase("retention_sweep", "SWEEP", "", 50, {"interval": 60.0, "batch_size": 500, **PASS_SHAPE}),
    HeartbeatPruneCase("heartbeat_prune", "HEARTBEAT", "PRUNE_", 1, {
        "interval": 86400.0, "batch_size": 500, **PASS_SHAPE, "batch_timeout": 5.0, "max_batches": 1,
        "full_batch_backoff_seconds": 60.0, "failure_backoff_seconds": 3600.0}),
    ArchivePruneCase("archive_prune", "ARCHIVE_PRUNE", "", 1, {
        "interval": 3600.0, "batch_size": 12, **PASS_SHAPE, "batch_timeout": 300.0},
        base_settings={"ENABLED": True},
        slowed_by_rows=()),  # a month goes by one TRUNCATE (PostgreSQL, MySQL), no row trigger fires
    ArchiveHorizonCase("archive_horizon", "ARCHIVE_HORIZON", "", 1, {
        "interval": 86400.0, "batch_size": 1, **PASS_SHAPE, "max_batches": 1},
        base_settings={"ENABLED": True}, one_batch=f"{ONE_BATCH}: one extension reaches the whole look-ahead"),
    PeriodicCase("periodic", "PERIODIC", "", 1, {
        "interval": 60.0, "batch_pause": 0.0, "batch_timeout": 10.0, "max_batches": 1,
        "full_batch_backoff_seconds": 1.0, "failure_backoff_seconds": 60.0},
        one_batch=f"{ONE_BATCH}: every due tick of every schedule"),
    DashboardSampleCase("dashboard_sample", "DASHBOARD", "", 1, {"interval": 60.0, "batch_size": 500, **PASS_SHAPE}),
]
