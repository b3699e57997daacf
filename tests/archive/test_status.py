"""manage.py headgate_status: jobs, workers, archive rows per month, the horizon."""

import json
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from django_headgate.archive_months import AFTER_EDGE, parse_archive_month
from django_headgate.conf import get_settings
from django_headgate.status import StatusContext, horizon_section
from tests.retention.helpers import enqueue, expired_jobs

from .rows import archive_rows


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
    assert report["horizon"] == {"after_2031_has_rows": False, "before_2025_has_rows": False,
                                 "last_month": "203112", "warn_from": "203107", "warning": False}
    text = status()
    assert "emails: available 2; oldest ready" in text
    assert "w-1 on host-a (pid 123), queues emails,billing" in text
    assert "after_2031 edge empty" in text and "WARNING" not in text


@pytest.mark.django_db
def test_a_row_in_the_after_2031_edge_is_reported(store):
    archive_rows(AFTER_EDGE, 1)
    report = json.loads(status("--json"))
    assert report["horizon"]["after_2031_has_rows"] is True
    assert any("headgate_job_archive_after_2031 holds rows" in w for w in report["warnings"])
    assert "after_2031 edge HOLDS ROWS" in status()


@pytest.mark.django_db
def test_horizon_warning_from_july_2031_by_the_store_clock(store):
    def warnings_at(month):
        now_ms = parse_archive_month(month).start_ms
        return horizon_section(StatusContext(store, get_settings(), store.now(), now_ms)).warnings

    assert warnings_at("203106") == []
    (warning,) = warnings_at("203107")
    assert "2031-12" in warning and "horizon migration" in warning
    assert warnings_at("203112") == [warning]


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
    assert report["archive"]["exact"] is (vendor == "sqlite")
    if vendor == "sqlite":
        assert (rows["202603"], rows["202611"], rows["202501"]) == (40, 7, 0)
    else:  # catalogue estimates: near the truth after ANALYZE
        assert 30 <= rows["202603"] <= 50 and 1 <= rows["202611"] <= 14 and rows["202501"] == 0
    assert "2026-03: " in status()
