"""prune_archive_month refuses malformed months before any SQL runs (not destructive)."""

import pytest

import django_headgate as headgate
from django_headgate.exceptions import ArchivePruneRefused

from .test_month_grammar import MALFORMED, OUTSIDE


@pytest.mark.django_db
@pytest.mark.parametrize("month", MALFORMED + OUTSIDE)
@pytest.mark.parametrize("dry_run", [False, True])
def test_refused_before_any_sql(month, dry_run, django_assert_num_queries):
    with django_assert_num_queries(0), pytest.raises(ArchivePruneRefused) as refused:
        headgate.prune_archive_month(month, dry_run=dry_run)
    assert refused.value.reason in ("invalid_month", "outside_horizon")


@pytest.mark.django_db
def test_command_prints_the_reason_and_fails(capsys):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError) as failed:
        call_command("prune_archive_month", "after_2031")
    assert failed.value.returncode == 1
    assert str(failed.value).startswith("refused (invalid_month):")
