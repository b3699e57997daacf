"""`manage.py headgate_status` shows the last outcome of every duty (read from
headgate_duty_run, so it works from another process than the maintainer)."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from django_headgate.maintenance.runner import MaintenanceRunner
from tests.heartbeats.rows import make_heartbeats

pytestmark = pytest.mark.django_db


def status(*args):
    out = StringIO()
    call_command("headgate_status", *args, stdout=out)
    return out.getvalue()


def test_text_report_has_a_maintenance_section():
    make_heartbeats(3, prefix="stale")
    MaintenanceRunner(duty_names=["heartbeat_prune"]).run_once()
    text = status()
    section = text.split("\nMaintenance\n", 1)[1]
    assert "heartbeat_prune: deleted, 3 rows in 1 batch(es)" in section
    assert "next in 864" in section  # the 24 h cadence after a partial batch: ~86400 s
    assert "rescue: has not run yet" in section
    assert "archive_prune: paused by settings" in section


def test_json_report_lists_every_duty():
    MaintenanceRunner(duty_names=["heartbeat_prune"]).run_once()
    report = json.loads(status("--json"))
    duties = {entry["duty"]: entry for entry in report["maintenance"]}
    assert duties["heartbeat_prune"]["status"] == "zero_or_contended"
    assert duties["heartbeat_prune"]["next_run_at"] and duties["rescue"]["status"] is None
