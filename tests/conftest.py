"""Shared fixtures: the store under test, and worker/maintainer subprocesses on the test database."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection, connections

from django_headgate import metrics
from django_headgate.jobs.retention_classes import forget_known_classes
from django_headgate.store import get_store
from django_headgate.store.archive_layout import forget_prepared_layout

from .support.pgbouncer import pgbouncer  # noqa: F401  (a session fixture: tests/support/pgbouncer.py)
from .skip_report import pytest_terminal_summary  # noqa: F401  (a pytest hook: the skip summary)
from .support.clock import FakeClock
from .support.periodic import EVERY_MINUTE, periodic_settings, tick_clock_of

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _fresh_caches():
    forget_known_classes()
    forget_prepared_layout()
    yield
    forget_known_classes()
    forget_prepared_layout()


@pytest.fixture(scope="session", autouse=True)
def _flush_the_archive_by_delete():
    """Between transactional tests Django flushes every table; on PostgreSQL it TRUNCATEs them, and
    a TRUNCATE of the partitioned archive touches each of its ~90 partitions: 1.5-3.5 s per test,
    against ~0.1 s for a DELETE of the few rows a test leaves. The flush deletes the archive's
    rows instead (MariaDB and SQLite flush by DELETE already). The archive prune tests issue
    their own TRUNCATE: this changes only the cleanup between tests."""
    if connection.vendor != "postgresql":
        yield
        return
    from django.db.backends.postgresql.operations import DatabaseOperations

    from django_headgate.models import ArchivedJob

    archive = ArchivedJob._meta.db_table
    truncate_all = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, **options):
        if archive not in tables:
            return truncate_all(self, style, tables, **options)
        others = [table for table in tables if table != archive]
        return [f"DELETE FROM {self.quote_name(archive)};", *truncate_all(self, style, others, **options)]

    DatabaseOperations.sql_flush = sql_flush
    yield
    DatabaseOperations.sql_flush = truncate_all


@pytest.fixture(autouse=True)
def _log_queries_as_with_debug():
    """Send every statement through Django's DEBUG query log (it formats ``sql % params``), as a
    host running with DEBUG=True does: a stray '%' in a statement fails here, not in production."""
    for alias_connection in connections.all():
        alias_connection.force_debug_cursor = True
    yield
    for alias_connection in connections.all():
        alias_connection.force_debug_cursor = False


@pytest.fixture
def store(db):
    return get_store()


@pytest.fixture(autouse=True)
def _fresh_metrics():
    """The duty counters (django_headgate.metrics) start at zero in every test."""
    metrics.reset()
    yield
    metrics.reset()


@pytest.fixture
def clock(store):
    """A fake store clock (tests/support/clock.py): cadence without sleeping."""
    return FakeClock(store.now())


@pytest.fixture
def vendor():
    return connection.vendor


@pytest.fixture
def every_minute():
    """HEADGATE["PERIODIC"] holding one schedule that ticks every minute (periodic duty tests)."""
    with periodic_settings({"every_minute": EVERY_MINUTE}):
        yield


@pytest.fixture
def tick_clock(store):
    """A fake store clock 10 s past a whole minute (periodic duty tests)."""
    return tick_clock_of(store)


def subprocess_env():
    """Environment for a manage.py subprocess that must use this test run's database."""
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    env["HG_TEST_DB_NAME"] = connection.settings_dict["NAME"]
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def manage_command(*args):
    return [sys.executable, "-m", "django", *args]


@pytest.fixture
def spawn(transactional_db):
    """Start ``manage.py <args>`` against the test database; every process is killed at teardown."""
    processes = []

    def start(*args, env=None, **kwargs):
        process = subprocess.Popen(
            manage_command(*args), env=env or subprocess_env(), cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs,
        )
        processes.append(process)
        return process

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()


@pytest.fixture
def run_manage(transactional_db):
    """Run ``manage.py <args>`` to completion against the test database; returns CompletedProcess."""

    def run(*args, timeout=120, env=None):
        return subprocess.run(manage_command(*args), env=env or subprocess_env(), cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)

    return run


def pytest_collection_modifyitems(items):
    """Acceptance (worker subprocesses) and browser tests are slow by nature: ``-m 'not slow'``."""
    for item in items:
        if item.get_closest_marker("acceptance") or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)
