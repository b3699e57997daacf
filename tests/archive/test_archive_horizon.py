"""headgate_archive_horizon on real partitions (destructive: it changes the archive layout, so it
runs only with HG_TEST_ARCHIVE_PRUNE=1, in this run's own test database, and puts the frozen
layout back after every test)."""

import os
import signal
import subprocess
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

import django_headgate as headgate
from django_headgate.archive.horizon import extend_horizon, horizon_privilege_findings, retire_pruned_months
from django_headgate.store.archive_layout import AFTER_EDGE, month_of_ms, month_partition, prepared_layout
from django_headgate.archive.months import prepared_archive_month
from django_headgate.exceptions import ArchiveHorizonRefused, ArchivePruneRefused
from django_headgate.models import ArchivedJob
from tests.conftest import manage_command, subprocess_env

from tests.support.archive_layout import restore_frozen_layout
from tests.support.archive_rows import archive_rows
from tests.support.waiting import wait_for

pytestmark = [
    pytest.mark.archive_prune,
    pytest.mark.slow,  # every test puts the frozen archive layout back: 6 to 15 s each
    pytest.mark.skipif(os.environ.get("HG_TEST_ARCHIVE_PRUNE") != "1",
                       reason="destructive archive horizon tests need HG_TEST_ARCHIVE_PRUNE=1"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture(autouse=True)
def partitioned(vendor):
    if vendor == "sqlite":
        pytest.skip("SQLite keeps the archive in one plain table (tests/archive/test_archive_horizon_refusals.py).")
    yield
    restore_frozen_layout()


def horizon(*args):
    out = StringIO()
    call_command("headgate_archive_horizon", *args, stdout=out)
    return out.getvalue()


def edge_rows(months_and_counts):
    """Rows evicted in months after 2031 (they land in the after_2031 edge), by month."""
    rows = []
    for key, count in months_and_counts.items():
        start = month_partition(int(key[:4]), int(key[4:])).start_ms
        rows += archive_rows(AFTER_EDGE, count, at_ms=start + 3_600_000)
    return {row.archive_id for row in rows}


def rows_in_partition(store, partition):
    return store.archive_horizon.row_counts(prepared_layout())[partition.key].rows


def archive_ids():
    return list(ArchivedJob.objects.values_list("archive_id", flat=True))


def test_edge_rows_end_up_in_their_months_and_a_second_run_changes_nothing(store):
    ids = edge_rows({"203203": 3, "203311": 2, "203402": 1})
    assert store.archive_partition_has_rows(AFTER_EDGE)
    with pytest.raises(ArchivePruneRefused) as refused:
        headgate.prune_archive_month("203203")
    assert refused.value.reason == "outside_horizon"

    out = horizon("--through", "203312")
    assert "create 24 months 203201 .. 203312, replace edge after_2031 by after_2033" in out
    layout = prepared_layout()
    assert (layout.last_month.key, layout.after_edge.key, len(layout.months)) == ("203312", "after_2033", 108)
    assert AFTER_EDGE not in layout.partitions
    assert rows_in_partition(store, prepared_archive_month("203203")) == 3
    assert rows_in_partition(store, prepared_archive_month("203311")) == 2
    assert rows_in_partition(store, layout.after_edge) == 1
    assert sorted(archive_ids()) == sorted(ids)  # every row exactly once

    catalogue = store.archive_horizon.catalog()
    assert "Nothing to do: the archive is prepared through 203312." in horizon("--through", "203312")
    assert "Nothing to do" in horizon("--through", "203301")  # inside the prepared last year
    assert store.archive_horizon.catalog() == catalogue
    assert sorted(archive_ids()) == sorted(ids)


def test_prepared_months_follow_the_normal_prune_rules(store):
    horizon("--through", "203212")
    for month in ("203201", "203203"):
        with pytest.raises(ArchivePruneRefused) as refused:
            headgate.prune_archive_month(month, dry_run=True)
        assert refused.value.reason == "month_not_closed"  # a known month, not yet ended
    with pytest.raises(ArchivePruneRefused) as refused:
        headgate.prune_archive_month("203301")
    assert refused.value.reason == "outside_horizon"
    # The store accepts the new month's name (closed set) for its partition operations.
    archive_rows("203203", 2)
    assert store.archive_partition_has_rows(prepared_archive_month("203203"))


def test_a_later_target_extends_again_and_an_earlier_one_is_refused(store):
    ids = edge_rows({"203405": 4})
    horizon("--through", "203212")
    assert prepared_layout().after_edge.key == "after_2032"
    horizon("--through", "203406")
    layout = prepared_layout()
    assert (layout.last_month.key, layout.after_edge.key) == ("203412", "after_2034")
    assert rows_in_partition(store, prepared_archive_month("203405")) == 4
    assert sorted(archive_ids()) == sorted(ids)
    with pytest.raises(CommandError) as refused:
        horizon("--through", "203312")
    assert str(refused.value).startswith("refused (before_horizon):")


def test_dry_run_changes_nothing(store):
    edge_rows({"203201": 1})
    catalogue = store.archive_horizon.catalog()
    out = horizon("--through", "203312", "--dry-run")
    assert "dry run: would create 24 months 203201 .. 203312" in out
    assert store.archive_horizon.catalog() == catalogue


def test_an_interrupted_move_is_finished_by_the_next_run_with_every_row_once(store, vendor):
    if vendor != "postgresql":
        pytest.skip("MySQL/MariaDB split the edge in one atomic REORGANIZE statement: no batches to interrupt.")
    rows = 6000
    ids = set()
    for _ in range(rows // 1000):
        ids |= edge_rows({"203207": 1000})
    env = {**subprocess_env(), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(manage_command("headgate_archive_horizon", "--through", "203212", "--batch-size", "7"),
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("moved "), (line, process.stderr.read() if process.poll() is not None else "")
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=30)
        process.stdout.close(), process.stderr.close()

    def batch_rolled_back():  # the server saw the connection drop and rolled the open batch back
        detached = store.archive_horizon.detached_edges()
        return detached and len(archive_ids()) + rows_in_detached(detached[0]) == rows and detached

    detached = wait_for(batch_rolled_back, timeout=30, message="nothing lost or doubled at the kill")
    assert [edge.key for edge in detached] == ["after_2031"]
    assert 0 < rows_in_detached(detached[0]) < rows
    from django_headgate.conf import get_settings
    from django_headgate.status import collect_status

    _, sections = collect_status(get_settings())
    assert any("interrupted horizon run" in w for s in sections for w in s.warnings)

    out = horizon("--through", "203212")
    assert "finish moving the rows of the detached edge after_2031" in out
    assert store.archive_horizon.detached_edges() == []
    assert sorted(archive_ids()) == sorted(ids) and len(set(archive_ids())) == rows
    assert rows_in_partition(store, prepared_archive_month("203207")) == rows


def rows_in_detached(edge):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(edge.table_name)}")
        return cursor.fetchone()[0]


def reorganizing():
    """True while a REORGANIZE PARTITION statement runs on the server (another session's)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE %s "
                       "AND ID <> CONNECTION_ID()", ["%REORGANIZE PARTITION%"])
        return cursor.fetchone()[0] > 0


def test_a_killed_reorganize_leaves_one_layout_or_the_other(store, vendor, run_manage):
    if vendor != "mysql":
        pytest.skip("The MySQL/MariaDB statement.")
    ids = set()
    for _ in range(5):
        ids |= edge_rows({"203207": 1000})
    process = subprocess.Popen(manage_command("headgate_archive_horizon", "--through", "203212"),
                               env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(lambda: process.poll() is not None or reorganizing(), timeout=60, interval=0.05,
             message="the REORGANIZE statement to run")
    process.kill()
    process.wait(timeout=30)
    process.stdout.close(), process.stderr.close()

    def extended():
        try:
            extend_horizon("203212")
        except ArchiveHorizonRefused as refused:  # the killed statement may still hold the table
            if refused.reason != "locked":
                raise
            return False
        return True

    wait_for(extended, timeout=60, interval=1, message="the killed statement to let go of the table")
    assert prepared_layout().last_month.key == "203212"
    assert sorted(archive_ids()) == sorted(ids)


def test_detaching_pruned_months_keeps_months_with_rows_and_the_edges(store):
    archive_rows("202503", 2)
    out = horizon("--detach-pruned-before", "202506", "--dry-run")
    assert "dry run: would detach and drop 202501, 202502, 202504, 202505" in out
    assert "kept (they hold rows): 202503" in out
    assert len(prepared_layout().months) == 84
    run = retire_pruned_months("202506")
    assert run.retired == ("202501", "202502", "202504", "202505") and run.kept_with_rows == ("202503",)
    layout = prepared_layout()
    assert [m.key for m in layout.months[:2]] == ["202503", "202506"]
    assert layout.before_edge.key == "before_2025" and layout.after_edge == AFTER_EDGE
    with pytest.raises(ArchivePruneRefused) as refused:
        headgate.prune_archive_month("202501")
    assert refused.value.reason == "outside_horizon"
    assert headgate.prune_archive_month("202503", dry_run=True).month == "202503"  # still a month
    assert store.archive_partition_has_rows(prepared_archive_month("202503"))


def test_months_that_have_not_ended_are_never_retired(store):
    now_key = "{:04d}{:02d}".format(*month_of_ms(store.archive_now_ms()))
    run = retire_pruned_months("203112", dry_run=True)
    assert run.retired and all(key < now_key for key in run.retired)


def test_the_duty_keeps_the_horizon_lookahead_months_ahead(store, settings):
    from django_headgate.archive.horizon import lookahead_target
    from django_headgate.conf import get_settings
    from django_headgate.maintenance.archive_horizon import ArchiveHorizonDuty

    settings.HEADGATE = {**settings.HEADGATE, "ARCHIVE_HORIZON": {"ENABLED": True, "LOOKAHEAD_MONTHS": 120}}
    target = lookahead_target(120)
    outcome = ArchiveHorizonDuty(store, get_settings()).run_once()
    assert outcome.status == "prepared" and outcome.rows > 0
    assert prepared_layout().last_month.key == f"{target[:4]}12"
    again = ArchiveHorizonDuty(store, get_settings()).run_once()
    assert again.rows == 0


def test_a_role_without_ownership_is_refused_and_told_why(store, vendor):
    if vendor != "postgresql":
        pytest.skip("Role switching on the test connection is PostgreSQL's SET ROLE.")
    role = f"hg_horizon_runtime_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE ROLE {q(role)} NOLOGIN")
        cursor.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {q(role)}")
    try:
        assert horizon_privilege_findings() == []
        with connection.cursor() as cursor:
            cursor.execute(f"SET ROLE {q(role)}")
        try:
            findings = horizon_privilege_findings()
            assert any("owner of headgate_job_archive" in finding for finding in findings)
            with pytest.raises(ArchiveHorizonRefused) as refused:
                extend_horizon("203212")
            assert refused.value.reason == "insufficient_privilege"
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET ROLE")
        assert prepared_layout().last_month.key == "203112"
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {q(role)}")
            cursor.execute(f"DROP ROLE {q(role)}")


def test_new_partitions_carry_the_grants_of_the_old_edge(store, vendor):
    if vendor != "postgresql":
        pytest.skip("MySQL/MariaDB grants are per table: new partitions share them.")
    role = f"hg_horizon_retention_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE ROLE {q(role)} NOLOGIN")
        cursor.execute(f"GRANT SELECT, TRUNCATE ON {q(AFTER_EDGE.table_name)} TO {q(role)}")
    try:
        horizon("--through", "203212")
        with connection.cursor() as cursor:
            cursor.execute("SELECT has_table_privilege(%s, %s, 'TRUNCATE'), has_table_privilege(%s, %s, 'SELECT')",
                           [role, "headgate_job_archive_203206", role, "headgate_job_archive_after_2032"])
            assert cursor.fetchone() == (True, True)
    finally:
        restore_frozen_layout()
        with connection.cursor() as cursor:
            cursor.execute(f"DROP OWNED BY {q(role)}")
            cursor.execute(f"DROP ROLE {q(role)}")


def hold_a_reader_of_the_archive(store, ready, release):
    """An open transaction that has read the archive (DETACH ... CONCURRENTLY waits for it)."""
    with store.atomic(), store.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM headgate_job_archive")
        ready.set()
        release.wait(30)


def test_a_detach_left_pending_is_finished_by_the_next_run(store, vendor, monkeypatch):
    if vendor != "postgresql":
        pytest.skip("DETACH PARTITION ... CONCURRENTLY is PostgreSQL's.")
    from django_headgate.archive import horizon as archive_horizon
    from tests.support.blockers import held_on_another_connection

    monkeypatch.setattr(archive_horizon, "LOCK_TIMEOUT_SECONDS", 1.0)
    with held_on_another_connection(hold_a_reader_of_the_archive):
        with pytest.raises(ArchiveHorizonRefused) as refused:
            retire_pruned_months("202502")
        assert refused.value.reason == "locked"
    with connection.cursor() as cursor:
        cursor.execute("SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = 'headgate_job_archive_202501'::regclass")
        assert cursor.fetchone() == (True,)
    assert retire_pruned_months("202502").retired == ("202501",)
    assert "202501" not in prepared_layout().months_by_key
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('headgate_job_archive_202501')")
        assert cursor.fetchone() == (None,)
