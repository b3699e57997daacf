"""`manage.py headgate_status` shows the last outcome of every duty (read from
headgate_duty_run, so it works from another process than the maintainer)."""

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command

from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner
from tests.support.heartbeat_rows import make_heartbeats

pytestmark = pytest.mark.django_db


def status(*args):
    out = StringIO()
    call_command("headgate_status", *args, stdout=out)
    return out.getvalue()


def test_text_report_has_a_maintenance_section():
    make_heartbeats(3, prefix="stale")
    MaintenanceRunner(get_settings(), duty_names=["heartbeat_prune"]).run_once()
    text = status()
    section = text.split("\nMaintenance\n", 1)[1]
    assert "heartbeat_prune: deleted, 3 rows in 1 batch(es)" in section
    # The 24 h cadence after a partial batch, counted from the pass's start by the store clock:
    # a little under 86,400 s by the time the report reads the clock again (however slow the run).
    (due,) = [int(n) for n in re.findall(r"heartbeat_prune: .*next in (\d+) s", section)]
    assert 86400 - 600 < due <= 86400
    assert "rescue: has not run yet" in section
    assert "archive_prune: paused by settings" in section


def test_json_report_lists_every_duty():
    MaintenanceRunner(get_settings(), duty_names=["heartbeat_prune"]).run_once()
    report = json.loads(status("--json"))
    duties = {entry["duty"]: entry for entry in report["maintenance"]}
    assert duties["heartbeat_prune"]["status"] == "zero_or_contended"
    assert duties["heartbeat_prune"]["next_run_at"] and duties["rescue"]["status"] is None


def test_text_report_explains_zero_or_contended():
    MaintenanceRunner(get_settings(), duty_names=["heartbeat_prune"]).run_once()
    section = status().split("\nMaintenance\n", 1)[1]
    assert ("heartbeat_prune: zero_or_contended (no rows: nothing to do, or another maintainer held the lock), "
            "0 rows in 1 batch(es)") in section
