"""headgate_status warns (text, --json `warnings`, the dashboard) and `--check` exits non-zero for:
an overdue duty, ready jobs no live worker serves, a ready job waiting too long, a sweep that hit
its batch cap with full batches. Every condition is fabricated by the store clock."""

import json
import re
import uuid
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from django.urls import reverse

from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner
from django_headgate.models import DutyRun, Job, WorkerHeartbeat
from django_headgate.store import get_store
from tests.support.retention_rows import enqueue, expired_jobs


def status(*args):
    out = StringIO()
    call_command("headgate_status", *args, stdout=out)
    return out.getvalue()


def check():
    """``headgate_status --check``: (exit code, output) through call_command."""
    out = StringIO()
    try:
        call_command("headgate_status", "--check", stdout=out)
    except CommandError as exc:
        return exc.returncode, out.getvalue()
    return 0, out.getvalue()


def record_duty(store, duty, *, overdue, status="rescued", rows=1, batches=1):
    """A duty-run row whose next pass was due ``overdue`` seconds ago by the store clock."""
    now = store.now()
    due = now - timedelta(seconds=overdue)
    DutyRun.objects.record(duty=duty, status=status, rows=rows, batches=batches, seconds=0.01,
                           started_at=due - timedelta(seconds=30), finished_at=due - timedelta(seconds=30),
                           next_run_at=due)


def live_worker(store, queues=()):
    store.register_heartbeat(f"w-{uuid.uuid4().hex[:8]}", uuid.uuid4(), "host-a", 123, json.dumps(list(queues)))


def warnings_of(report, check_name):
    return [entry["message"] for entry in report["health"] if entry["check"] == check_name]


@pytest.mark.django_db
def test_a_healthy_store_has_no_warnings(store):
    live_worker(store)
    enqueue("emails")
    MaintenanceRunner(get_settings(), duty_names=["rescue", "retention_sweep"]).run_once()
    report = json.loads(status("--json"))
    assert report["warnings"] == [] and report["health"] == []
    assert "no warnings" in status() and "WARNING" not in status()
    assert check() == (0, "OK: no warnings\n")


@pytest.mark.django_db
def test_a_duty_overdue_by_more_than_three_cadences(store):
    record_duty(store, "rescue", overdue=337)  # RESCUE.INTERVAL 30 s: 3 cadences are 90 s
    record_duty(store, "retention_sweep", overdue=170, status="evicted")  # SWEEP.INTERVAL 60 s: under 180 s
    report = json.loads(status("--json"))
    (warning,) = warnings_of(report, "duty_overdue")
    assert warning.startswith("Maintenance duty rescue is overdue by 3") and "cadence is 30 s" in warning
    assert report["warnings"] == [warning]
    text = status()
    assert "rescue: rescued, 1 rows in 1 batch(es)" in text and "overdue by 3" in text
    assert f"WARNING: {warning}" in text
    code, out = check()
    # Each call reads the clock anew: a second may pass between them (337 s, then 338 s).
    assert code == 1 and without_seconds(out) == without_seconds(f"WARNING: {warning}\n")


def without_seconds(text):
    return re.sub(r"overdue by \d+ s", "overdue by N s", text)


@pytest.mark.django_db
@override_settings(HEADGATE={"ARCHIVE_PRUNE": {"ENABLED": False}})
def test_a_paused_duty_is_never_overdue(store):
    record_duty(store, "archive_prune", overdue=30 * 86400, status="pruned")
    assert json.loads(status("--json"))["warnings"] == []


@pytest.mark.django_db
def test_ready_jobs_with_no_live_worker(store):
    enqueue("emails"), enqueue("billing")
    report = json.loads(status("--json"))
    (warning,) = warnings_of(report, "ready_without_worker")
    assert "Ready jobs in billing, emails but no worker is live" in warning
    assert "within 15 s" in warning
    # A live worker for emails only leaves billing unserved; a worker of every queue serves both.
    live_worker(store, ["emails"])
    (warning,) = warnings_of(json.loads(status("--json")), "ready_without_worker")
    assert "Ready jobs in billing but no live worker serves them" in warning
    live_worker(store)
    assert warnings_of(json.loads(status("--json")), "ready_without_worker") == []
    assert check() == (0, "OK: no warnings\n")


@pytest.mark.django_db
def test_a_stale_heartbeat_is_no_live_worker(store):
    live_worker(store)
    WorkerHeartbeat.objects.update(last_heartbeat_at=store.now() - timedelta(seconds=16))
    enqueue("emails")
    report = json.loads(status("--json"))
    assert warnings_of(report, "ready_without_worker") and report["workers"]["live_count"] == 0
    assert check()[0] == 1


@pytest.mark.django_db
def test_the_oldest_ready_job_older_than_the_threshold(store):
    live_worker(store)
    old, fresh = enqueue("emails"), enqueue("billing")
    Job.objects.filter(id=old.id).update(run_at=store.now() - timedelta(minutes=6))  # default limit 5 min
    report = json.loads(status("--json"))
    (warning,) = warnings_of(report, "oldest_ready_too_old")
    assert warning.startswith("The oldest ready job in emails has waited 36") and "(5 min)" in warning
    assert report["warnings"] == [warning]
    with override_settings(HEADGATE={"STATUS": {"OLDEST_READY_WARNING": 3600}}):
        assert json.loads(status("--json"))["warnings"] == []
    # A job scheduled for later is not ready: it never warns, however far its run_at.
    Job.objects.filter(id=fresh.id).update(run_at=store.now() + timedelta(days=1))
    code, out = check()
    assert code == 1 and out.startswith("WARNING: The oldest ready job in emails") and out.count("\n") == 1


@pytest.mark.django_db
@override_settings(HEADGATE={"SWEEP": {"BATCH_SIZE": 50, "MAX_BATCHES": 2, "BATCH_PAUSE": 0}})
def test_a_sweep_that_hit_its_batch_cap_with_full_batches(store):
    expired_jobs(store, 101)
    MaintenanceRunner(get_settings(), duty_names=["retention_sweep"]).run_once()
    run = DutyRun.objects.get(duty="retention_sweep")
    assert (run.status, run.rows, run.batches) == ("evicted", 100, 2)
    report = json.loads(status("--json"))
    (warning,) = warnings_of(report, "sweep_backlog")
    assert "ran its 2 batch(es) full (100 rows)" in warning and "SWEEP.MAX_BATCHES" in warning
    assert f"WARNING: {warning}" in status()
    assert check()[0] == 1
    # The next pass evicts the one job left and comes back short: no backlog.
    MaintenanceRunner(get_settings(), duty_names=["retention_sweep"]).run_once()
    assert warnings_of(json.loads(status("--json")), "sweep_backlog") == []


@pytest.mark.django_db
def test_the_dashboard_shows_the_same_warnings(store, admin_client):
    enqueue("emails")
    response = admin_client.get(reverse("admin:headgate_dashboard"))
    assert response.status_code == 200
    assert "Ready jobs in emails but no worker is live" in response.content.decode()


def test_check_exit_status_in_a_subprocess(run_manage):
    record_duty(get_store(), "rescue", overdue=337)
    result = run_manage("headgate_status", "--check")
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("WARNING: Maintenance duty rescue is overdue by 3")
    assert "1 warning(s)." in result.stderr
    result = run_manage("headgate_status", "--json", "--check")
    assert result.returncode == 1 and json.loads(result.stdout)["warnings"]
    DutyRun.objects.all().delete()
    result = run_manage("headgate_status", "--check")
    assert (result.returncode, result.stdout) == (0, "OK: no warnings\n"), result.stderr
