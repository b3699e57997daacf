"""Real database conditions that make a duty fail or find its lock taken, held on another
connection (a thread of its own) for the length of a ``with`` block."""

import threading
from contextlib import contextmanager

from django.db import connection, connections

from django_headgate.store import get_store


@contextmanager
def held_on_another_connection(hold):
    """Run ``hold(store, release_event)`` on a thread with its own connection; yield once it
    signalled ``ready``; release it afterwards."""
    ready, release, errors = threading.Event(), threading.Event(), []

    def target():
        try:
            hold(get_store(), ready, release)
        except Exception as exc:  # surfaced in the test thread
            errors.append(exc)
            ready.set()
        finally:
            connections.close_all()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    assert ready.wait(10), "the other connection never got ready"
    assert not errors, errors
    try:
        yield
    finally:
        release.set()
        thread.join(10)
    assert not errors, errors


def hold_duty_lock(name):
    """Hold the singleton lock of duty ``name`` (as another maintainer would)."""

    def hold(store, ready, release):
        with store.singleton_lock(f"headgate.duty.{name}") as taken:
            assert taken
            ready.set()
            release.wait(30)

    return hold


def hold_table_lock(table):
    """Block every access to ``table`` (PostgreSQL ACCESS EXCLUSIVE, MySQL LOCK TABLES ...
    WRITE) until released: a duty's batch on it then runs into its statement budget."""

    def hold(store, ready, release):
        with store.cursor() as cursor:
            if store.vendor == "postgresql":
                with store.atomic():
                    cursor.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
                    ready.set()
                    release.wait(30)
            else:
                cursor.execute(f"LOCK TABLES {table} WRITE")
                try:
                    ready.set()
                    release.wait(30)
                finally:
                    cursor.execute("UNLOCK TABLES")

    return hold


@contextmanager
def rows_made_slow(table, seconds_per_row):
    """Every row an UPDATE or DELETE on ``table`` touches costs ``seconds_per_row`` more (a
    trigger that sleeps), so a statement's time grows with its rows, as on an overloaded server.
    PostgreSQL and MySQL/MariaDB; the trigger is gone after the block."""
    seconds = float(seconds_per_row)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("CREATE FUNCTION headgate_test_slow_row() RETURNS trigger LANGUAGE plpgsql AS "
                           f"$$ BEGIN PERFORM pg_sleep({seconds}); RETURN COALESCE(NEW, OLD); END $$")
            cursor.execute(f"CREATE TRIGGER headgate_test_slow_row BEFORE UPDATE OR DELETE ON {table} "
                           "FOR EACH ROW EXECUTE FUNCTION headgate_test_slow_row()")
            drop = [f"DROP TRIGGER headgate_test_slow_row ON {table}", "DROP FUNCTION headgate_test_slow_row()"]
        else:
            drop = []
            for event in ("UPDATE", "DELETE"):
                cursor.execute(f"CREATE TRIGGER headgate_test_slow_{event.lower()} BEFORE {event} ON {table} "
                               f"FOR EACH ROW SET @headgate_test_slept = SLEEP({seconds})")
                drop.append(f"DROP TRIGGER headgate_test_slow_{event.lower()}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for statement in drop:
                cursor.execute(statement)


def hold_row_locks(job_ids):
    """Hold ``SELECT ... FOR UPDATE`` on the job rows ``job_ids``, as an admin action or a backfill
    would: one primary-key lookup each, so that on every vendor exactly those rows are locked (a
    scan of a small table would lock every row it reads on MariaDB)."""
    from django_headgate.models import Job

    def hold(store, ready, release):
        with store.atomic():
            for job_id in job_ids:
                list(Job.objects.using(store.alias).select_for_update().filter(pk=job_id))
            ready.set()
            release.wait(60)

    return hold


def hold_running_range_lock():
    """``SELECT ... FOR UPDATE`` over every ``running`` row, as an operator's console would run
    it: on MariaDB/MySQL in REPEATABLE READ (the server's default), so InnoDB also locks the
    gaps of the claim index's ``running`` range, where a claim's ``UPDATE`` must write."""
    from django_headgate.models import Job

    def hold(store, ready, release):
        if store.vendor == "mysql":
            with store.cursor() as cursor:
                cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        with store.atomic():
            list(Job.objects.using(store.alias).select_for_update().filter(state="running"))
            ready.set()
            release.wait(60)

    return hold
