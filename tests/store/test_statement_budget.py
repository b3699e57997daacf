"""store.statement_budget on every vendor: a statement over its run time or its lock wait fails,
the session's own values come back afterwards, and a replaced connection is left alone."""

import pytest
from django.db import OperationalError, connection

from django_headgate.models import Job
from tests.factories import JobFactory
from tests.support.blockers import held_on_another_connection

pytestmark = pytest.mark.django_db(transaction=True)

SESSION_VALUES = {
    "postgresql": "SELECT current_setting('statement_timeout'), current_setting('lock_timeout')",
    "mysql": "SELECT @@SESSION.max_statement_time, @@SESSION.lock_wait_timeout, @@SESSION.innodb_lock_wait_timeout",
    "sqlite": "PRAGMA busy_timeout",
}
SLEEP = {"postgresql": "SELECT pg_sleep(2)", "mysql": "SELECT SLEEP(2)"}


def session_values():
    with connection.cursor() as cursor:
        cursor.execute(SESSION_VALUES[connection.vendor], [])
        return tuple(cursor.fetchone())


def error_code(exc):
    """PostgreSQL's SQLSTATE or MariaDB's error number of a driver error."""
    cause = exc.__cause__
    return getattr(cause, "sqlstate", None) or (cause.args[0] if cause is not None and cause.args else None)


def test_a_statement_over_its_run_time_fails_and_the_session_values_come_back(store, vendor):
    if vendor == "sqlite":
        pytest.skip("SQLite has no statement timeout: only its busy timeout is set (next tests)")
    before = session_values()
    with store.statement_budget(0.3):
        assert session_values() != before
        with pytest.raises(OperationalError), connection.cursor() as cursor:
            cursor.execute(SLEEP[vendor], [])  # PostgreSQL 57014; MariaDB 1969
    assert session_values() == before
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1", [])


def test_a_lock_wait_over_lock_seconds_fails_before_the_run_time(store, vendor):
    if vendor == "sqlite":
        pytest.skip("SQLite has no row locks: a foreign writer holds the whole database")
    job = JobFactory()

    def hold_row(other_store, ready, release):
        with other_store.atomic():
            list(Job.objects.select_for_update().filter(pk=job.id))
            ready.set()
            release.wait(30)

    with held_on_another_connection(hold_row):
        with store.statement_budget(30, lock_seconds=1):
            with pytest.raises(OperationalError) as raised, store.atomic():
                list(Job.objects.select_for_update().filter(pk=job.id))
    # PostgreSQL lock_not_available (not 57014, the statement timeout); InnoDB lock wait timeout.
    assert error_code(raised.value) in ("55P03", 1205)


def test_sqlite_sets_its_busy_timeout_only_when_given_lock_seconds(store, vendor):
    if vendor != "sqlite":
        pytest.skip("the busy timeout is SQLite's only bound")
    (before,) = session_values()
    with store.statement_budget(5):
        assert session_values() == (before,)
    with store.statement_budget(5, lock_seconds=0.25):
        assert session_values() == (250,)
    assert session_values() == (before,)


def test_nested_budgets_restore_in_turn(store):
    before = session_values()
    with store.statement_budget(20, lock_seconds=10):
        outer = session_values()
        with store.statement_budget(5, lock_seconds=2):
            assert session_values() != outer
        assert session_values() == outer
    assert session_values() == before


def test_a_connection_replaced_inside_the_block_is_left_alone(store):
    before = session_values()
    with store.statement_budget(5, lock_seconds=2):
        connection.close()
        assert session_values() == before  # a new session: the defaults, nothing to undo
    assert session_values() == before


PLAN_SETTINGS = ("SELECT current_setting('enable_seqscan'), current_setting('enable_bitmapscan'), "
                 "current_setting('plan_cache_mode')")


def test_the_worker_plan_settings_are_set_and_reset(store, vendor):
    store.set_worker_plan()
    if vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(PLAN_SETTINGS, [])
            assert cursor.fetchone() == ("off", "off", "force_generic_plan")
    store.reset_worker_plan()
    if vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(PLAN_SETTINGS, [])
            assert cursor.fetchone() == ("on", "on", "auto")
