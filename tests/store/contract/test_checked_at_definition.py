"""The store contract is checked when a vendor class is defined, and a missing feature says so."""

import threading
import types

import pytest

from django_headgate.exceptions import UnsupportedOnVendor
from django_headgate.store import get_store
from django_headgate.store.base import BaseStore
from django_headgate.store.contract import contract_gaps
from django_headgate.store.mysql import MySQLStore
from django_headgate.store.postgresql import PostgreSQLStore
from django_headgate.store.sqlite import SQLiteStore, flow, heartbeats, jobs, sweep, worker


def statements_without(name):
    module = types.ModuleType("statements")
    for source in (jobs, heartbeats, sweep, worker, flow):
        module.__dict__.update({key: value for key, value in vars(source).items() if key.startswith("SQL_")})
    del module.__dict__[name]
    return module


@pytest.mark.parametrize("store_class", [PostgreSQLStore, MySQLStore, SQLiteStore])
def test_every_vendor_supplies_the_whole_contract(store_class):
    assert contract_gaps(store_class, store_class.sql) == ([], [])


def test_a_vendor_missing_a_statement_is_refused_when_defined():
    with pytest.raises(TypeError, match="SQL_READ_FENCES"):
        type("Broken", (SQLiteStore,), {"vendor": "broken", "statements": (statements_without("SQL_READ_FENCES"),)})


@pytest.mark.parametrize("operation", ["claim_jobs", "acknowledge_and_claim", "is_contention"])
def test_a_vendor_missing_an_operation_is_refused_when_defined(operation):
    with pytest.raises(TypeError, match=operation):
        type("Broken", (BaseStore,), {"vendor": "broken", "statements": (jobs, heartbeats, sweep)})


def test_a_vendor_overriding_a_default_need_not_define_its_statements():
    class ReadsFences(SQLiteStore):
        vendor = "sqlite"
        statements = (statements_without("SQL_READ_FENCES"),)

        def read_fences(self, job_ids):
            return {}

    assert not hasattr(ReadsFences.sql, "SQL_READ_FENCES")


@pytest.mark.django_db(transaction=True)
def test_listen_for_jobs_runs_where_supported_and_is_refused_elsewhere(store):
    wake, stop = threading.Event(), threading.Event()
    if not store.supports_listen_notify:
        with pytest.raises(UnsupportedOnVendor) as raised:
            store.listen_for_jobs(wake, stop)
        assert store.vendor in str(raised.value)
        return
    stop.set()  # a stopped listener returns at once (in a thread: it closes its own connection)
    listener = threading.Thread(target=store.listen_for_jobs, args=(wake, stop))
    listener.start()
    listener.join(timeout=10)
    assert not listener.is_alive()


@pytest.mark.django_db(transaction=True, databases=["default", "jobs"])
def test_singleton_lock_is_scoped_to_the_database(store):
    """A singleton taken on one database leaves the same duty free on another database of the
    same server (MySQL's GET_LOCK names are server-wide, PostgreSQL's advisory locks per database)."""
    if store.vendor == "sqlite":
        pytest.skip("SQLite: singleton locks are in-process only (no server to share)")
    other = get_store("jobs")
    with store.singleton_lock("headgate.scope-test") as taken_here:
        with other.singleton_lock("headgate.scope-test") as taken_there:
            assert taken_here and taken_there
