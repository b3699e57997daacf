"""The store contract's errors section (store/contract/errors.py): what kind of error a
``DatabaseError`` is, by each vendor's codes (store/<vendor>/errors.py), never by its text, and
what may be said of it (store/errors.py: its class and its code).

It is one classification: a statement stopped by its time budget and a deadlock are contention
(the worker waits them out; a duty's batch runs again smaller), and neither is a lost
connection. Errors are made by the real database where one can make them, and from each
vendor's code tables for all three vendors."""

import sqlite3

import pytest
from django.db import DataError, IntegrityError, OperationalError, connections

from django_headgate.models import Job
from django_headgate.store.errors import describe_database_error
from django_headgate.store.mysql import MySQLStore
from django_headgate.store.mysql import errors as mysql_codes
from django_headgate.store.postgresql import PostgreSQLStore
from django_headgate.store.postgresql import errors as postgresql_codes
from django_headgate.store.sqlite import SQLiteStore
from tests.factories import JobFactory
from tests.support.blockers import held_on_another_connection

STORES = {"postgresql": PostgreSQLStore("default"), "mysql": MySQLStore("default"), "sqlite": SQLiteStore("default")}


class PgError(Exception):
    def __init__(self, sqlstate):
        super().__init__("text that may quote row data")
        self.sqlstate = sqlstate


def django_error(cause, kind=OperationalError):
    """As Django raises a driver's error: its own class, the driver's error as the cause."""
    exc = kind(*cause.args)
    exc.__cause__ = cause
    return exc


def mysql_error(code, kind=OperationalError):
    return django_error(Exception(code, "text that may quote row data"), kind)


def sqlite_error(name):
    cause = sqlite3.OperationalError("database is locked")
    cause.sqlite_errorname = name
    return django_error(cause)


CONTENTION = [
    ("postgresql", django_error(PgError("55P03"))),  # lock_timeout
    ("postgresql", django_error(PgError("57014"))),  # statement_timeout
    ("postgresql", django_error(PgError("40P01"))),  # deadlock
    ("postgresql", django_error(PgError("40001"))),  # serialization failure
    ("mysql", mysql_error(1205)),  # lock wait timeout
    ("mysql", mysql_error(1969)),  # MariaDB max_statement_time
    ("mysql", mysql_error(3024)),  # MySQL max_execution_time
    ("mysql", mysql_error(1213)),  # deadlock
    ("sqlite", sqlite_error("SQLITE_BUSY")),
    ("sqlite", sqlite_error("SQLITE_LOCKED_SHAREDCACHE")),
]


@pytest.mark.parametrize("vendor, exc", CONTENTION, ids=[
    "pg-lock", "pg-statement", "pg-deadlock", "pg-serialization", "my-lock", "mariadb-statement",
    "mysql-statement", "my-deadlock", "sqlite-busy", "sqlite-locked"])
def test_contention_is_not_a_lost_connection(vendor, exc):
    store = STORES[vendor]
    assert store.is_contention(exc) and not store.is_connection_error(exc) and not store.is_permanent_error(exc)


@pytest.mark.parametrize("code", [1153, 2006, 2013])
def test_a_dropped_mysql_connection_is_no_contention(code):
    exc = mysql_error(code)
    assert STORES["mysql"].is_connection_error(exc) and not STORES["mysql"].is_contention(exc)
    assert describe_database_error(exc) == f"OperationalError ({code})"


@pytest.mark.parametrize("code, connection_lost", [(2006, True), (2013, True), (1205, False), (1213, False)])
def test_mysql_codes_without_a_cause(code, connection_lost):
    exc = OperationalError(code, "text")
    assert STORES["mysql"].is_connection_error(exc) is connection_lost
    assert describe_database_error(exc) == f"OperationalError ({code})"


@pytest.mark.parametrize("sqlstate", ["08006", "57P01", "57P03"])
def test_postgresql_connection_exceptions(sqlstate):
    exc = django_error(PgError(sqlstate))
    assert STORES["postgresql"].is_connection_error(exc) and not STORES["postgresql"].is_contention(exc)


def test_errors_are_described_by_class_and_code_without_their_text():
    exc = django_error(PgError("22P05"), DataError)
    assert describe_database_error(exc) == "DataError (22P05)"
    assert "row data" not in describe_database_error(exc)
    assert STORES["postgresql"].is_permanent_error(exc) and not STORES["postgresql"].is_connection_error(exc)
    assert not STORES["postgresql"].is_contention(exc)


@pytest.mark.parametrize("vendor", sorted(STORES))
def test_an_integrity_error_is_permanent_and_an_error_without_code_a_lost_connection(vendor):
    store = STORES[vendor]
    assert store.is_permanent_error(IntegrityError("CHECK constraint failed"))
    assert store.is_connection_error(OperationalError("could not connect to server"))
    assert not store.is_connection_error(DataError("no code, but about the data"))


@pytest.mark.parametrize("code", sorted(mysql_codes.DATA_ERRORS))
def test_mysql_data_errors_are_permanent(code):
    assert STORES["mysql"].is_permanent_error(mysql_error(code))


@pytest.mark.parametrize("vendor, codes, make", [
    ("postgresql", postgresql_codes, lambda code: django_error(PgError(code))),
    ("mysql", mysql_codes, mysql_error),
], ids=["postgresql", "mysql"])
def test_one_classification_budget_and_deadlock_are_contention(vendor, codes, make):
    """What a duty degrades on (``is_budget_exceeded``) and what the worker calls a deadlock
    are contention for the worker, and never a lost connection."""
    store = STORES[vendor]
    deadlock = make(codes.DEADLOCK_DETECTED if vendor == "postgresql" else codes.ER_LOCK_DEADLOCK)
    assert store.is_deadlock(deadlock) and store.is_contention(deadlock) and not store.is_budget_exceeded(deadlock)
    for code in codes.BUDGET_EXCEEDED:
        exc = make(code)
        assert store.is_budget_exceeded(exc) and store.is_contention(exc) and not store.is_connection_error(exc)
    for code in codes.CONTENTION:
        assert not store.is_connection_error(make(code))


def test_sqlite_never_exceeds_a_budget_nor_deadlocks():
    busy = sqlite_error("SQLITE_BUSY")
    assert STORES["sqlite"].is_contention(busy)
    assert not STORES["sqlite"].is_budget_exceeded(busy) and not STORES["sqlite"].is_deadlock(busy)


# -- errors made by the database --------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_lock_wait_over_its_budget_is_contention(store, vendor):
    job = JobFactory()

    def hold_row(other, ready, release):
        with other.atomic():
            Job.objects.filter(pk=job.id).update(priority=1)
            ready.set()
            release.wait(30)

    with held_on_another_connection(hold_row):
        with store.statement_budget(30, lock_seconds=0.3):
            with pytest.raises(OperationalError) as raised:
                Job.objects.filter(pk=job.id).update(priority=2)
    exc = raised.value
    assert store.is_contention(exc) and not store.is_connection_error(exc) and not store.is_permanent_error(exc)
    assert store.is_budget_exceeded(exc) is (vendor != "sqlite")  # SQLite: its busy timeout


@pytest.mark.django_db(transaction=True)
def test_a_statement_over_its_run_time_is_a_budget_exceeded(store, vendor):
    if vendor == "sqlite":
        pytest.skip("SQLite has no statement timeout")
    with store.statement_budget(0.3), pytest.raises(OperationalError) as raised:
        with store.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(2)" if vendor == "postgresql" else "SELECT SLEEP(2)", [])
    exc = raised.value
    assert store.is_budget_exceeded(exc) and store.is_contention(exc) and not store.is_connection_error(exc)


@pytest.mark.django_db
def test_a_duplicate_key_is_a_unique_violation_and_permanent(store):
    job = JobFactory()
    with pytest.raises(IntegrityError) as raised, store.atomic():
        Job.objects.create(**{field.attname: getattr(job, field.attname) for field in Job._meta.concrete_fields})
    exc = raised.value
    assert store.is_unique_violation(exc) and store.is_permanent_error(exc)
    assert not store.is_contention(exc) and not store.is_connection_error(exc)


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_ended_is_a_lost_connection(store, vendor):
    if vendor == "sqlite":
        pytest.skip("SQLite has no server connection to lose")
    victim = connections.create_connection(store.alias)
    try:
        victim.ensure_connection()
        raw = victim.connection
        session = raw.info.backend_pid if vendor == "postgresql" else raw.thread_id()
        with store.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)" if vendor == "postgresql" else "KILL CONNECTION %s",
                           [session])
        with pytest.raises(OperationalError) as raised, victim.cursor() as cursor:
            cursor.execute("SELECT 1", [])
    finally:
        victim.close()
    exc = raised.value
    assert store.is_connection_error(exc) and not store.is_contention(exc) and not store.is_permanent_error(exc)
