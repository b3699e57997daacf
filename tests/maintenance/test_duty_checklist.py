"""The duty checklist, run over every registered duty (rescue, retention sweep, heartbeat prune,
archive prune, archive horizon, periodic) on real databases: defaults, only eligible rows, bounded
batches, a pause between batches, a batch over its time budget run again smaller (a slow
statement) or failing (a lock held elsewhere), a prompt stop, a failure logged with outcome
``failed`` and its backoff, a second pass that is a no-op, a contended singleton lock skipped.
An item that does not fit a duty's shape (a pass of one batch) is skipped with the reason;
duty_cases.py has the adapter of each duty."""

import dataclasses
import logging
import threading
from datetime import timedelta

import pytest
from django.db import connection, connections

from django_headgate.store.archive_layout import prepared_layout
from django_headgate.conf import get_settings
from django_headgate.maintenance.registry import DUTIES
from django_headgate.models import DutyRun

from tests.support.blockers import held_on_another_connection, hold_duty_lock, hold_table_lock, rows_made_slow
from .duty_cases import CASES

pytestmark = pytest.mark.django_db(transaction=True)  # threads and failing statements need commits


@pytest.fixture(params=CASES, ids=[case.name for case in CASES])
def case(request, settings):
    case = dataclasses.replace(request.param, settings=settings)  # per-test state starts afresh
    yield case
    case.cleanup()


@pytest.fixture
def configure(case, settings):
    """Set the duty's own settings (``configure(BATCH_SIZE=1, MAX_BATCHES=3)``), keeping those
    set before (a case's eligible builder may have set some)."""

    def apply(**keys):
        sections = {name: {**settings.HEADGATE.get(name, {}), **values}
                    for name, values in case.section_settings(**keys).items()}
        settings.HEADGATE = {**settings.HEADGATE, **sections}

    apply()
    return apply


@pytest.fixture
def make_duty(case, store, clock):
    def make(**kwargs):
        duty = case.duty_class(store, get_settings(), clock=clock, **kwargs)
        case.adjust(duty)
        return duty

    return make


def no_pause(seconds):
    return False


def several_batches(case):
    if case.one_batch:
        pytest.skip(case.one_batch)


def test_every_registered_duty_has_a_case():
    assert sorted(d.name for d in DUTIES) == sorted(case.name for case in CASES)


def test_defaults(case, configure, make_duty):
    duty = make_duty()
    assert {name: getattr(duty, name) for name in case.defaults} == case.defaults
    assert duty.enabled and duty.name == case.name


def test_only_eligible_rows_are_handled(case, configure, make_duty, store):
    case.make_eligible(store, 3)
    case.make_ineligible(store, 2)
    outcome = make_duty(wait=no_pause).run_once()
    assert (outcome.status, outcome.rows, outcome.full_batch) == (case.duty_class.work_status, case.rows(3), False)
    assert case.eligible_left() == 0 and case.ineligible_left() == 2


def test_batches_are_bounded_and_capped_per_pass(case, configure, make_duty, store):
    several_batches(case)
    size = case.smallest_batch
    configure(BATCH_SIZE=size, MAX_BATCHES=2)
    case.make_eligible(store, 2 * size + 1)
    outcome = make_duty(wait=no_pause).run_once()
    assert (outcome.rows, outcome.batches, outcome.full_batch) == (2 * size, 2, True)
    assert case.eligible_left() == 1
    backoff = timedelta(seconds=case.defaults["full_batch_backoff_seconds"])
    assert outcome.next_run_at == outcome.started_at + backoff  # soon: more rows are waiting


def test_a_jittered_pause_between_batches(case, configure, make_duty, store):
    several_batches(case)
    size = max(case.smallest_batch, 2)  # batches of 2, 2, 1: the short third one ends the pass
    configure(BATCH_SIZE=size, BATCH_PAUSE=2, MAX_BATCHES=10)
    case.make_eligible(store, 2 * size + 1)
    pauses = []
    outcome = make_duty(wait=lambda seconds: pauses.append(seconds) and False).run_once()
    assert (outcome.rows, outcome.batches) == (2 * size + 1, 3)
    assert len(pauses) == 2 and all(1.5 <= p <= 2.5 for p in pauses)  # 2 s +-25 %, none after the last


def test_a_slow_batch_is_run_again_smaller_and_the_pass_goes_on(case, configure, make_duty, store, vendor, caplog):
    """A statement made slow per row (a trigger that sleeps) runs over the budget at the full
    batch size and fits at the reduced one: the pass degrades instead of failing."""
    several_batches(case)
    if vendor not in case.slowed_by_rows:
        pytest.skip("SQLite has no statement timeout" if vendor == "sqlite" else
                    f"no statement of a {case.name} batch grows with its rows on {vendor}")
    size, budget = max(case.smallest_batch, 10), 2.0
    configure(BATCH_SIZE=size, BATCH_TIMEOUT=budget, MAX_BATCHES=2)
    case.make_eligible(store, size)
    duty = make_duty(wait=no_pause)
    reduced = duty.reduced_batch_size  # a tenth: size // 10
    # A full batch takes 2.5 budgets (cut at one); a reduced one a quarter of the budget.
    with caplog.at_level(logging.INFO, logger="django_headgate"), \
            rows_made_slow(case.table(store), budget / 4 / reduced):
        outcome = duty.run_once()
    assert (outcome.status, outcome.rows, outcome.batches, outcome.full_batch, outcome.reduced_batch_size) == \
        (case.duty_class.work_status, 2 * reduced, 2, True, reduced)
    assert case.eligible_left() == size - 2 * reduced  # the batch that ran over changed nothing
    (record,) = [r for r in caplog.records if getattr(r, "action", None) == "duty_pass"]
    assert (record.levelname, record.reduced_batch_size) == ("WARNING", reduced)
    assert f"in batches of {reduced}: a batch of {size} ran over its 2 s time budget" in record.getMessage()
    again = make_duty(wait=no_pause).run_once()  # the next pass starts at the full size again
    assert (again.rows, again.reduced_batch_size) == (size - 2 * reduced, None)


def test_a_batch_over_its_time_budget_under_a_lock_fails(case, configure, make_duty, store, vendor, caplog):
    """A lock held elsewhere makes the batch run over its budget at any size: it is run again
    smaller (where the duty's batch can shrink), then the pass fails and says so."""
    if vendor == "sqlite":
        pytest.skip("SQLite has no statement timeout: its busy timeout is the only bound (documented)")
    configure(BATCH_TIMEOUT=0.5)
    case.make_eligible(store, 2)
    duty = make_duty()
    with caplog.at_level(logging.INFO, logger="django_headgate"), \
            held_on_another_connection(hold_table_lock(case.table(store))):
        outcome = duty.run_once()
    assert (outcome.status, outcome.rows) == ("failed", 0)
    assert case.eligible_left() == 2
    assert outcome.reduced_batch_size == duty.reduced_batch_size  # None: its batch cannot shrink
    (record,) = [r for r in caplog.records if getattr(r, "action", None) == "duty_pass"]
    assert (record.levelname, record.reduced_batch_size) == ("ERROR", duty.reduced_batch_size)
    assert ("run again with" in record.getMessage()) == (duty.reduced_batch_size is not None)
    configure(BATCH_TIMEOUT=case.defaults["batch_timeout"])  # a horizon extension may take 0.5 s
    assert make_duty(wait=no_pause).run_once().rows == case.rows(2)  # the session's own timeout was restored


def test_stops_promptly_when_asked(case, configure, make_duty, store):
    several_batches(case)
    size = case.smallest_batch
    configure(BATCH_SIZE=size, BATCH_PAUSE=60, MAX_BATCHES=10)
    case.make_eligible(store, 3 * size)
    duty, first_batch, outcomes = make_duty(), threading.Event(), []
    run_batch = duty.run_batch

    def first_batch_then_signal(limit):
        handled = run_batch(limit)
        first_batch.set()
        return handled

    duty.run_batch = first_batch_then_signal

    def maintainer():
        try:
            outcomes.append(duty.run_once())
        finally:
            connections.close_all()

    thread = threading.Thread(target=maintainer)
    thread.start()
    assert first_batch.wait(30)
    duty.cancelled.set()  # what MaintenanceRunner.stop() does
    thread.join(20)  # far less than the 60 s pause it was in
    assert not thread.is_alive()
    (outcome,) = outcomes
    assert (outcome.status, outcome.rows, outcome.batches) == ("cancelled", size, 1)


def test_failure_is_logged_recorded_and_backs_off(case, configure, make_duty, store, caplog):
    configure(FAILURE_BACKOFF=1234)
    case.make_eligible(store, 2)
    with caplog.at_level(logging.ERROR, logger="django_headgate"), \
            table_renamed_away(case.broken_table(store)):
        outcome = make_duty().run_once()
    assert (outcome.status, outcome.rows) == ("failed", 0)
    assert outcome.next_run_at == outcome.finished_at + timedelta(seconds=1234)
    (record,) = [r for r in caplog.records if getattr(r, "action", None) == "duty_pass"]
    assert (record.levelname, record.duty, record.status) == ("ERROR", case.name, "failed")
    run = DutyRun.objects.get(duty=case.name)
    assert (run.status, run.next_run_at) == ("failed", outcome.next_run_at)
    assert case.eligible_left() == 2
    assert make_duty(wait=no_pause).run_once().rows == case.rows(2)  # the next pass works


def test_a_second_pass_is_a_no_op(case, configure, make_duty, store):
    case.make_eligible(store, 2)
    duty = make_duty(wait=no_pause)
    assert duty.run_once().rows == case.rows(2)
    again = duty.run_once()
    assert (again.status, again.rows, again.contended) == ("zero_or_contended", 0, False)


def test_a_contended_lock_is_skipped(case, configure, make_duty, store):
    case.make_eligible(store, 2)
    with held_on_another_connection(hold_duty_lock(case.name)):
        outcome = make_duty().run_once()
    assert (outcome.status, outcome.rows, outcome.batches, outcome.contended) == ("zero_or_contended", 0, 0, True)
    assert case.eligible_left() == 2
    assert not DutyRun.objects.filter(duty=case.name).exists()  # only a lock holder records


# -- real database conditions ---------------------------------------------------------------------

class table_renamed_away:
    """The table renamed for the block: the duty's statements fail (a dropped or broken table)."""

    def __init__(self, table):
        self.table, self.away = table, f"{table}_away"

    def _rename(self, old, new):
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {old} RENAME TO {new}")

    def __enter__(self):
        if self.table.startswith("headgate_job_archive"):
            # The layout as a running maintainer read it before the table broke (a child renamed
            # away would otherwise simply not be a prepared month any more).
            prepared_layout()
        self._rename(self.table, self.away)

    def __exit__(self, *exc):
        self._rename(self.away, self.table)
