"""prune_archive_month on real data (destructive: runs only with HG_TEST_ARCHIVE_PRUNE=1, in this
run's own test database)."""

import os
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection

import django_headgate as headgate
from django_headgate.archive import prune as archive
from django_headgate.exceptions import ArchivePruneRefused
from django_headgate.models import ArchivedJob
from tests.support.blockers import held_on_another_connection

from tests.support.archive_rows import DAY_MS, archive_rows, current_month, last_closed_month, rows_in

pytestmark = [
    pytest.mark.archive_prune,
    pytest.mark.skipif(os.environ.get("HG_TEST_ARCHIVE_PRUNE") != "1",
                       reason="destructive archive prune tests need HG_TEST_ARCHIVE_PRUNE=1"),
    pytest.mark.django_db(transaction=True),
]


def refusal(month, **kwargs):
    with pytest.raises(ArchivePruneRefused) as refused:
        headgate.prune_archive_month(month, **kwargs)
    return refused.value.reason


def filenode(table):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_relation_filenode(%s::regclass)", [table])
        return cursor.fetchone()[0]


def test_an_expired_closed_month_is_emptied_and_only_it(store):
    archive_rows("202603", 50)
    archive_rows("202604", 5)
    before = filenode("headgate_job_archive_202603") if store.vendor == "postgresql" else None
    result = headgate.prune_archive_month("202603")
    assert (result.month, result.partition, result.pruned) == ("202603", "headgate_job_archive_202603", True)
    assert (rows_in("202603"), rows_in("202604")) == (0, 5)
    if store.vendor == "postgresql":
        assert filenode("headgate_job_archive_202603") != before  # TRUNCATE, not DELETE


def test_one_unexpired_row_holds_the_whole_month(store):
    archive_rows("202604", 20)
    archive_rows("202604", 1, retention_ms=36500 * DAY_MS)
    assert refusal("202604") == "rows_not_expired"
    assert rows_in("202604") == 21


def test_the_current_month_and_later_ones_are_refused(store):
    month = current_month(store)
    archive_rows(month, 3, retention_ms=1)
    assert refusal(month.key) == "month_not_closed"
    assert refusal("203112") == "month_not_closed"
    assert rows_in(month) == 3


@pytest.mark.parametrize("month, reason", [
    ("before_2025", "invalid_month"), ("after_2031", "invalid_month"),
    ("202412", "outside_horizon"), ("203201", "outside_horizon"),
])
def test_edges_are_refused(store, month, reason):
    assert refusal(month) == reason


def test_a_changed_policy_does_not_shorten_archived_rows(store):
    month = last_closed_month(store)
    # Evicted at the month's last millisecond under a policy that outlives today by 30 days.
    keep_ms = store.archive_now_ms() - (month.end_ms - 1) + 30 * DAY_MS
    headgate.set_archive_policy("billing", timedelta(milliseconds=keep_ms // 1000 * 1000))
    archive_rows(month, 2, retention_ms=keep_ms, at_ms=month.end_ms - 1)
    headgate.set_archive_policy("billing", timedelta(days=1))  # shorter now
    assert refusal(month.key) == "rows_not_expired"
    assert rows_in(month) == 2


def test_dry_run_reports_and_changes_nothing(store):
    archive_rows("202602", 4)
    result = headgate.prune_archive_month("202602", dry_run=True)
    assert (result.dry_run, result.pruned) == (True, False)
    assert rows_in("202602") == 4
    archive_rows("202602", 1, retention_ms=36500 * DAY_MS)
    assert refusal("202602", dry_run=True) == "rows_not_expired"


def hold_prune_lock(store, ready, release):
    with store.singleton_lock(archive.PRUNE_LOCK) as taken:
        assert taken
        ready.set()
        release.wait(30)


def test_a_concurrent_prune_is_refused_as_locked(store):
    archive_rows("202601", 2)
    with held_on_another_connection(hold_prune_lock):
        assert refusal("202601") == "locked"
    assert rows_in("202601") == 2


def in_flight_insert(month, retention_ms):
    """A sweep transaction writing an unexpired row into ``month``: commits about 1 s after ready."""

    def hold(store, ready, release):
        with store.atomic():
            archive_rows(month, 1, retention_ms=retention_ms)
            ready.set()
            release.wait(1.0)

    return hold


def test_a_row_committed_while_prune_waits_is_seen(store):
    """Eligibility is checked under the partition lock: a sweep that was writing into the month
    commits first, and its unexpired row makes the prune refuse instead of truncating it."""
    archive_rows("202605", 10)  # all expired
    started = time.monotonic()
    with held_on_another_connection(in_flight_insert("202605", 36500 * DAY_MS)):
        assert refusal("202605") == "rows_not_expired"
        assert time.monotonic() - started >= 0.5  # it did wait for the writer
    assert rows_in("202605") == 11


def test_command_exit_status(run_manage):
    archive_rows("202607", 3)
    archive_rows("202608", 1, retention_ms=36500 * DAY_MS)
    dry = run_manage("prune_archive_month", "202607", "--dry-run")
    assert dry.returncode == 0 and "eligible" in dry.stdout
    done = run_manage("prune_archive_month", "202607")
    assert done.returncode == 0 and "202607: pruned" in done.stdout
    refused = run_manage("prune_archive_month", "202608")
    assert refused.returncode == 1 and "refused (rows_not_expired)" in refused.stderr
    assert (rows_in("202607"), rows_in("202608")) == (0, 1)
    assert ArchivedJob.objects.count() == 1
