"""The worker's exit status tells what it left behind: 3 when the shutdown timeout released
running jobs, 1 with one clear line when the database is unreachable at start-up."""

import signal
import subprocess

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish
from tests.conftest import ROOT, manage_command, subprocess_env
from tests.support.waiting import wait_for

pytestmark = pytest.mark.acceptance


def test_shutdown_timeout_releases_running_job_and_exits_3(spawn, monkeypatch, tmp_path):
    monkeypatch.setenv("HG_TEST_SHUTDOWN_TIMEOUT", "0.5")
    marker = tmp_path / "started"
    job = headgate.enqueue("tests.testapp.tasks.sleep_marking", args=(20, str(marker)), max_attempts=1)
    worker = spawn("headgate_worker", "--concurrency", "1", "--worker-id", "impatient")
    # The task itself has started (a claimed row is "running" before a thread takes it up, and a
    # job still in the buffer is given back at SIGTERM without waiting for any timeout).
    wait_for(marker.exists, message="the job to start")
    worker.send_signal(signal.SIGTERM)
    returncode, stdout, stderr = finish(worker, timeout=30)
    assert returncode == 3, stderr
    assert "released 1 running job(s) without spending their attempt" in stderr
    assert "1 released at the shutdown timeout" in stdout
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts) == ("available", 0)


def test_database_down_at_start_up_gives_one_clear_line_and_exits_1(transactional_db):
    env = subprocess_env()
    env.pop("HG_TEST_DB_NAME")
    env["DATABASE_URL"] = "postgres://postgres@127.0.0.1:1/nothing"  # nothing listens on port 1
    env["HG_TEST_STARTUP_TIMEOUT"] = "1.5"
    done = subprocess.run(manage_command("headgate_worker", "--burst"), env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) <= 2, done.stderr  # the first failure, then the final refusal
    assert "unreachable for 1.5 s" in lines[-1] and "the worker did not start" in lines[-1]
