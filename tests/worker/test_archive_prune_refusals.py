"""prune_archive_month refuses malformed months before any SQL runs, and months that are not
prepared after reading only the partition catalogue (not destructive)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

import django_headgate as headgate
from django_headgate.exceptions import ArchivePruneRefused

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
