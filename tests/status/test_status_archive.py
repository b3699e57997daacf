"""manage.py headgate_status: jobs, workers, archive rows per month, the horizon."""

import json
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from django_headgate.store.archive_layout import AFTER_EDGE
from django_headgate.archive.months import prepared_archive_month
from django_headgate.conf import get_settings
from django_headgate.status import StatusContext, horizon_section
from tests.support.retention_rows import enqueue, expired_jobs

from tests.support.archive_rows import archive_rows


def status(*args):
    out = StringIO()
    call_command("headgate_status", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_jobs_and_workers(store):
    enqueue("emails"), enqueue("emails"), enqueue("billing")
    expired_jobs(store, 1, queue="billing", state="dead")
    store.register_heartbeat("w-1", uuid.uuid4(), "host-a", 123, json.dumps(["emails", "billing"]))
    report = json.loads(status("--json"))
    assert report["jobs"]["by_queue"]["emails"]["states"] == {"available": 2}
    assert report["jobs"]["by_queue"]["billing"]["states"] == {"available": 1, "dead": 1}
    assert report["jobs"]["oldest_ready_age_seconds"] >= 0
    assert [w["worker_id"] for w in report["workers"]["live"]] == ["w-1"]
    horizon = report["horizon"]
    assert {key: horizon[key] for key in ("after_edge", "after_edge_has_rows", "before_edge_has_rows",
                                          "first_month", "last_month", "warn_from", "warning")} == {
        "after_edge": "after_2031", "after_edge_has_rows": False, "before_edge_has_rows": False,
        "first_month": "202501", "last_month": "203112", "warn_from": "203107", "warning": False}
    assert horizon["edges_have_rows"] == {"before_2025": False, "after_2031": False}
    assert horizon["months_left"] > 6
    text = status()
    assert "emails: available 2; oldest ready" in text
    assert "w-1 on host-a (pid 123), queues emails,billing" in text
    assert "after_2031 edge empty" in text and "WARNING" not in text


@pytest.mark.django_db
def test_a_row_in_the_after_2031_edge_is_reported(store):
    archive_rows(AFTER_EDGE, 1)
    report = json.loads(status("--json"))
    assert report["horizon"]["after_edge_has_rows"] is True
    assert any("headgate_job_archive_after_2031 holds rows" in w for w in report["warnings"])
    assert "after_2031 edge HOLDS ROWS" in status()


@pytest.mark.django_db
def test_horizon_warning_from_july_2031_by_the_store_clock(store):
    def warnings_at(month):
        now_ms = prepared_archive_month(month).start_ms
        return horizon_section(StatusContext(store, get_settings(), store.now(), now_ms)).warnings

    assert warnings_at("203106") == []
    (warning,) = warnings_at("203107")
    assert "2031-12 (6 month(s) left)" in warning and "headgate_archive_horizon --through" in warning
    (last,) = warnings_at("203112")
    assert "2031-12 (1 month(s) left)" in last


def refresh_estimates(vendor):
    with connection.cursor() as cursor:
        if vendor == "postgresql":
            cursor.execute("ANALYZE headgate_job_archive")
        elif vendor == "mysql":
            cursor.execute("ANALYZE TABLE headgate_job_archive")
            cursor.fetchall()


@pytest.mark.django_db(transaction=True)
def test_archive_rows_per_month(store, vendor):
    archive_rows("202603", 40)
    archive_rows("202611", 7)
    refresh_estimates(vendor)
    report = json.loads(status("--json"))
    rows = report["archive"]["rows_by_partition"]
    assert len(rows) == 86
    assert report["archive"]["exact"] is True  # small partitions are counted exactly
    assert (rows["202603"], rows["202611"], rows["202501"]) == (40, 7, 0)
    assert "2026-03: 40" in status()


@pytest.mark.django_db(transaction=True)
def test_rows_just_archived_are_counted_exactly_before_any_analyse(store):
    archive_rows("202604", 30)
    report = json.loads(status("--json"))
    assert report["archive"]["rows_by_partition"]["202604"] == 30
    assert "202604" in report["archive"]["exact_partitions"]
    assert "2026-04: 30" in status() and "~0" not in status()
