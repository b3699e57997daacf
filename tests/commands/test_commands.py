"""headgate_worker / headgate_maintain argument handling and terminal output."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

import django_headgate as headgate
from django_headgate.models import Job
from tests.factories import JobFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("arguments", [
    ["--queues", "bad queue"], ["--queues", ","], ["--concurrency", "0"], ["--concurrency", "x"],
    ["--lease-seconds", "1"], ["--max-jobs", "0"],
    ["--worker-id", ""], ["--worker-id", "w" * 201], ["--worker-id", "w-1\nFAKE LOG LINE"],
    ["--worker-id", "w\x1b[31m"], ["--worker-id", "w\x00"], ["--worker-id", "w\u202e"],
    ["--worker-id", "w\ud800"],
])
def test_worker_refuses_bad_arguments(arguments):
    with pytest.raises(CommandError):
        call_command("headgate_worker", "--burst", *arguments)


def test_worker_summary_and_no_progress_line_off_a_terminal():
    """--progress draws only on a terminal (tests/acceptance/test_worker_logs.py has the pty);
    asked for on a pipe it says why there is none, and the summary is the whole output."""
    for n in range(3):
        headgate.enqueue("tests.testapp.tasks.add", args=(n, n))
    out, err = StringIO(), StringIO()
    call_command("headgate_worker", "--burst", "--progress", "--worker-id", "cmd", stdout=out, stderr=err)
    assert out.getvalue() == "headgate_worker cmd: 3 succeeded, 0 retried, 0 dead, 0 rejected as stale.\n"
    assert "--progress: no progress line (stdout is not a terminal)." in err.getvalue()
    assert Job.objects.filter(state="succeeded").count() == 3


def test_maintain_once_reports_each_duty():
    JobFactory(running_expired=True)
    out = StringIO()
    call_command("headgate_maintain", "--once", "--duty", "rescue", stdout=out)
    assert "rescue: rescued rows=1 batches=1" in out.getvalue()
    assert Job.objects.get().state == "available"


def test_maintain_refuses_unknown_duty():
    with pytest.raises(CommandError, match="Unknown duty"):
        call_command("headgate_maintain", "--once", "--duty", "nope")


@pytest.mark.parametrize("command", ["headgate_worker", "headgate_maintain"])
def test_a_changed_class_duration_stops_the_command_with_one_clear_line(command):
    from datetime import timedelta

    from django.test import override_settings

    headgate.register_retention_class("audit_1y", timedelta(days=365))
    with override_settings(HEADGATE={"RETENTION_CLASSES": {"audit_1y": timedelta(days=30)}}):
        with pytest.raises(CommandError) as raised:
            call_command(command, "--burst" if command == "headgate_worker" else "--once")
    message = str(raised.value)
    assert message.startswith("HEADGATE['RETENTION_CLASSES'] cannot be applied: Retention class 'audit_1y'")
    assert "365 days" in message and "30 days" in message and "\n" not in message
