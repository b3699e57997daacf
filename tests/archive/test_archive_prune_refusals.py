"""prune_archive_month refuses malformed months before any SQL runs, and months that are not
prepared after reading only the partition catalogue; a database error on that read is raised as
it is (not destructive)."""

import pytest
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections
from django.test.utils import CaptureQueriesContext

import django_headgate as headgate
from django_headgate.exceptions import ArchivePruneRefused
from django_headgate.store.archive_layout import forget_prepared_layout

from tests.unit.test_archive_month_grammar import MALFORMED, OUTSIDE


@pytest.mark.django_db
@pytest.mark.parametrize("month", MALFORMED)
@pytest.mark.parametrize("dry_run", [False, True])
def test_refused_before_any_sql(month, dry_run, django_assert_num_queries):
    with django_assert_num_queries(0), pytest.raises(ArchivePruneRefused) as refused:
        headgate.prune_archive_month(month, dry_run=dry_run)
    assert refused.value.reason == "invalid_month"


@pytest.mark.django_db
@pytest.mark.parametrize("month", OUTSIDE)
@pytest.mark.parametrize("dry_run", [False, True])
def test_unprepared_month_is_refused_after_reading_only_the_catalogue(month, dry_run):
    """A well-formed month outside the prepared set may re-read the catalogue (another process
    may have prepared it), but the month itself never reaches SQL."""
    with CaptureQueriesContext(connection) as queries, pytest.raises(ArchivePruneRefused) as refused:
        headgate.prune_archive_month(month, dry_run=dry_run)
    assert refused.value.reason == "outside_horizon"
    assert all(month not in query["sql"] for query in queries.captured_queries)


@pytest.mark.django_db
def test_command_prints_the_reason_and_fails(capsys):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError) as failed:
        call_command("prune_archive_month", "after_2031")
    assert failed.value.returncode == 1
    assert str(failed.value).startswith("refused (invalid_month):")


def end_this_session(vendor):
    """End this thread's database session from the server side, as a server restart or a cut
    network does: the next statement on it fails with a DatabaseError."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()" if vendor == "postgresql" else "SELECT CONNECTION_ID()")
        session = cursor.fetchone()[0]
    other = connections.create_connection(DEFAULT_DB_ALIAS)
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)" if vendor == "postgresql" else "KILL %s", [session])
    finally:
        other.close()


@pytest.mark.django_db(transaction=True)
def test_a_database_error_before_the_store_is_chosen_is_raised_as_it_is(vendor):
    """The first statement of a prune reads the partition catalogue; when it fails, the
    DatabaseError itself is raised (it was an UnboundLocalError: the error handler read the
    store before it was assigned)."""
    if vendor == "sqlite":
        pytest.skip("SQLite reads no partition catalogue: no statement runs before the store is chosen.")
    forget_prepared_layout()
    end_this_session(vendor)
    try:
        with pytest.raises(DatabaseError):
            headgate.prune_archive_month("202608", dry_run=True)
    finally:
        connection.close()
