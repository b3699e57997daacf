"""The store through a real PgBouncer (tests/support/pgbouncer.py), PostgreSQL pass only: session pooling
keeps every session feature; under transaction pooling (HEADGATE["POOLING"]) the store keeps no
session state: singleton locks are transaction-level locks held by a transaction of their own, a
duty batch's statement budget is SET LOCAL, LISTEN is refused with a clear error."""

import threading

import pytest
from django.db import DatabaseError, connections

import django_headgate as headgate
from django_headgate.exceptions import UnsupportedUnderTransactionPooling
from django_headgate.store import get_store
from django_headgate.worker.budget import TimeBudget
from tests.support.waiting import wait_for
from tests.support.pgbouncer import ALIASES

pytestmark = pytest.mark.slow


def through(*aliases):
    """Database access for the test: the direct test database and these PgBouncer aliases."""
    return pytest.mark.django_db(transaction=True, databases=["default", *aliases])

LOCK = "headgate.duty.pgbouncer-test"


def _advisory_locks_here():
    """Advisory locks held in the test database, as the server sees them (a direct connection)."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                       "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")
        return cursor.fetchone()[0]


def _setting(alias, name):
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT current_setting(%s)", [name])
        return cursor.fetchone()[0]


@pytest.mark.parametrize("mode", ["session", "transaction"])
@through(*ALIASES)
def test_singleton_lock_excludes_a_direct_maintainer_and_is_released(pgbouncer, mode):
    direct = get_store("default")
    alias = f"bouncer_{mode}"
    with pgbouncer.pooling(alias):
        pooled = get_store(alias)
        assert pooled.transaction_pooled is (mode == "transaction")
        with pooled.singleton_lock(LOCK) as taken:
            assert taken
            with direct.singleton_lock(LOCK) as other:
                assert not other
            # A batch of the pass commits on the pooled alias while the lock is held.
            headgate.enqueue("tests.testapp.tasks.noop", using=alias)
        assert _advisory_locks_here() == 0
        with direct.singleton_lock(LOCK) as other:
            assert other


@through("bouncer_transaction", "bouncer_transaction_b")
def test_two_transaction_pooled_maintainers_exclude_each_other(pgbouncer):
    first, second = "bouncer_transaction", "bouncer_transaction_b"
    with pgbouncer.pooling(first, second):
        with get_store(first).singleton_lock(LOCK) as taken:
            assert taken
            with get_store(second).singleton_lock(LOCK) as other:
                assert not other
        with get_store(second).singleton_lock(LOCK) as other:
            assert other


@through("bouncer_transaction")
def test_statement_budget_is_local_to_the_batch_under_transaction_pooling(pgbouncer):
    alias = "bouncer_transaction"
    with pgbouncer.pooling(alias):
        store = get_store(alias)
        with pytest.raises(DatabaseError), store.statement_budget(0.2):
            with connections[alias].cursor() as cursor:
                cursor.execute("SELECT pg_sleep(2)")
        with store.statement_budget(5, lock_seconds=2):
            assert (_setting(alias, "statement_timeout"), _setting(alias, "lock_timeout")) == ("5s", "2s")
        assert (_setting(alias, "statement_timeout"), _setting(alias, "lock_timeout")) == ("0", "0")


@through("bouncer_transaction")
def test_worker_session_settings_are_not_set_under_transaction_pooling(pgbouncer):
    alias = "bouncer_transaction"
    with pgbouncer.pooling(alias):
        budget = TimeBudget(get_store(alias), 1.0, 1.0, session_name="headgate worker pooled")
        budget.ensure()
        # Sole client of its pool: a session setting would be seen on this server connection.
        assert (_setting(alias, "statement_timeout"), _setting(alias, "enable_seqscan"),
                _setting(alias, "application_name")) == ("0", "on", "")
        budget.clear()


@through("bouncer_transaction", "bouncer_session")
def test_listen_is_refused_under_transaction_pooling_and_works_under_session_pooling(pgbouncer):
    alias = "bouncer_transaction"
    with pgbouncer.pooling(alias):
        store = get_store(alias)
        assert not store.wakes_on_notify
        with pytest.raises(UnsupportedUnderTransactionPooling, match=r"HEADGATE\['POOLING'\]\['bouncer_transaction'\]"):
            store.listen_for_jobs(threading.Event(), threading.Event())
    alias = "bouncer_session"
    with pgbouncer.pooling(alias):
        store = get_store(alias)
        assert store.wakes_on_notify
        wake, stop = threading.Event(), threading.Event()
        listener = threading.Thread(target=store.listen_for_jobs, args=(wake, stop, "headgate listener test"))
        listener.start()
        try:
            def listening():
                with connections["default"].cursor() as cursor:
                    cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN headgate_jobs' "
                                   "AND application_name = 'headgate listener test'")
                    return cursor.fetchone()[0] == 1

            wait_for(listening, timeout=30, message="the LISTEN session behind PgBouncer")
            wake.clear()
            headgate.enqueue("tests.testapp.tasks.noop")  # committed on the direct connection
            assert wake.wait(30), "no NOTIFY reached the listener through session pooling"
        finally:
            stop.set()
            listener.join(timeout=10)
