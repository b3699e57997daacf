"""What an operator reads from the Headgate commands, captured from real subprocesses: the
start-up lines, one line per failed attempt (job id, task, queue, attempt, error type; never the
payload or the exception's message), successes at DEBUG only, the default console handler of a
host without LOGGING (text or JSON) and none beside the host's own, the progress line on a
terminal (a pty) never sharing a line with a log record, and a prune refusal printed once."""

import json
import os
import pty
import re
import select
import subprocess
import time

import pytest

import django_headgate as headgate
from django_headgate.management.console import ERASE_LINE
from tests.acceptance.helpers import render_terminal
from tests.conftest import ROOT, manage_command, subprocess_env

pytestmark = pytest.mark.acceptance

SECRET = "secret-payload-4711"
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR) +django_headgate\.\S+: ")


@pytest.fixture
def host_without_logging(monkeypatch):
    """The subprocesses run as a host whose settings have no LOGGING (Django's default only)."""
    monkeypatch.setenv("HG_TEST_NO_LOGGING", "1")


def test_start_up_and_failure_lines_without_a_logging_setting(run_manage, host_without_logging):
    failing = headgate.enqueue("tests.testapp.tasks.fail_always", kwargs={"message": SECRET}, max_attempts=2,
                               queue="mail")
    succeeding = headgate.enqueue("tests.testapp.tasks.add", args=(1, 2), queue="mail")
    done = run_manage("headgate_worker", "--max-jobs", "3", "--queues", "mail", "--concurrency", "1",
                      "--worker-id", "logs-1")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines and all(LOG_LINE.match(line) for line in lines), done.stderr
    started = [line for line in lines if "started:" in line]
    assert len(started) == 1 and started[0].endswith(
        "INFO    django_headgate.worker.worker: Worker logs-1 started: queues mail, concurrency 1, "
        "lease 30 s, buffer 4-64, database 'default'.")
    failed = [line for line in lines if f"Job {failing.id} " in line]
    assert len(failed) == 2, done.stderr
    assert failed[0].split(" ", 2)[2].startswith(
        f"WARNING django_headgate.worker.jobs: Job {failing.id} (tests.testapp.tasks.fail_always, queue mail) "
        "failed on attempt 1/2: RuntimeError; will be retried in ")
    assert failed[1].split(" ", 2)[2] == (
        f"ERROR   django_headgate.worker.jobs: Job {failing.id} (tests.testapp.tasks.fail_always, queue mail) "
        "failed on attempt 2/2: RuntimeError; dead.")
    assert SECRET not in done.stderr + done.stdout
    assert str(succeeding.id) not in done.stderr  # successes are DEBUG lines
    assert done.stdout == "headgate_worker logs-1: 1 succeeded, 1 retried, 1 dead, 0 rejected as stale.\n"


def test_json_lines_parse_and_carry_the_fields_successes_at_verbosity_3(run_manage, host_without_logging,
                                                                       monkeypatch):
    monkeypatch.setenv("HG_TEST_LOG_FORMAT", "json")
    failing = headgate.enqueue("tests.testapp.tasks.fail_always", kwargs={"message": SECRET}, max_attempts=1)
    succeeding = headgate.enqueue("tests.testapp.tasks.add", args=(2, 3))
    done = run_manage("headgate_worker", "--max-jobs", "2", "--worker-id", "logs-json", "-v", "3")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stderr.splitlines()]
    by_action = {}
    for record in records:
        assert {"time", "level", "logger", "message"} <= record.keys()
        by_action.setdefault(record.get("action"), []).append(record)
    [start] = by_action["worker_start"]
    assert (start["level"], start["worker_id"], start["queues"], start["concurrency"], start["lease_seconds"],
            start["buffer"], start["buffer_max"], start["database"]) == (
        "INFO", "logs-json", None, 4, 30.0, 16, 256, "default")
    [success] = by_action["job_succeeded"]
    assert (success["level"], success["job_id"], success["task"], success["queue"], success["attempt"],
            success["max_attempts"]) == ("DEBUG", str(succeeding.id), "tests.testapp.tasks.add", "default", 1, 3)
    assert success["seconds"] >= 0
    [dead] = by_action["job_dead"]
    assert (dead["level"], dead["job_id"], dead["task"], dead["queue"], dead["attempt"], dead["max_attempts"],
            dead["error_type"], dead["state"]) == (
        "ERROR", str(failing.id), "tests.testapp.tasks.fail_always", "default", 1, 1, "RuntimeError", "dead")
    assert SECRET not in done.stderr


def test_no_default_handler_beside_the_hosts_logging(run_manage):
    """tests/settings.py configures a console handler (no formatter) at WARNING: each record is
    written once, by it, and the host's level is kept at the default verbosity."""
    failing = headgate.enqueue("tests.testapp.tasks.fail_always", max_attempts=1)
    done = run_manage("headgate_worker", "--max-jobs", "1", "--worker-id", "logs-host")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"Job {failing.id} (tests.testapp.tasks.fail_always, queue default) failed on attempt 1/1: RuntimeError; dead."]


def read_terminal(process, master, timeout=180):
    """Everything the process writes to the pty until it exits."""
    chunks, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the process closed its end
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    process.wait(timeout=30)
    return b"".join(chunks).decode(errors="replace")


def run_on_a_terminal(*args):
    master, slave = pty.openpty()
    process = subprocess.Popen(manage_command(*args), env=subprocess_env(), cwd=ROOT,
                               stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    try:
        return process, read_terminal(process, master)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()


def test_progress_line_on_a_terminal_never_shares_a_line_with_log_records(transactional_db, host_without_logging):
    failing = [headgate.enqueue("tests.testapp.tasks.fail_always", max_attempts=2) for _ in range(3)]
    headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(2.5,))  # keeps it past a redraw
    process, output = run_on_a_terminal("headgate_worker", "--max-jobs", "7", "--concurrency", "2",
                                        "--worker-id", "pty")
    assert process.returncode == 0, output
    assert "jobs/s" in output  # the progress line was drawn
    for match in LOG_LINE.finditer(output):  # every record starts on an erased line
        before = output[:match.start()]
        assert before == "" or before.endswith("\n") or before.endswith(ERASE_LINE), output[match.start() - 80:]
    shown = [line for line in render_terminal(output) if line.strip()]
    assert shown[-1] == "headgate_worker pty: 1 succeeded, 3 retried, 3 dead, 0 rejected as stale."
    for line in shown[:-1]:
        assert LOG_LINE.match(line) and "jobs/s" not in line, shown
    assert sum(f"Job {job.id} " in line for line in shown for job in failing) == 6


def test_no_progress_line_when_the_hosts_handler_writes_to_the_terminal(transactional_db):
    headgate.enqueue("tests.testapp.tasks.add", args=(1, 1))
    process, output = run_on_a_terminal("headgate_worker", "--burst", "--progress", "--worker-id", "pty-host")
    assert process.returncode == 0, output
    assert "jobs/s" not in output
    assert "--progress: no progress line (the LOGGING handlers write to the terminal)." in output


def test_maintainer_start_up_line_and_its_outcomes_explained(run_manage, host_without_logging):
    done = run_manage("headgate_maintain", "--once", "--duty", "rescue")
    assert done.returncode == 0, done.stderr
    [line] = done.stderr.splitlines()
    assert LOG_LINE.match(line) and line.endswith(
        "INFO    django_headgate.maintenance.runner: Maintainer started for one pass: duties rescue "
        "(every 30 s); database 'default'.")
    assert done.stdout.startswith("rescue: zero_or_contended (nothing to do) rows=0 batches=1 ")


@pytest.mark.parametrize("logging_setting", ["host LOGGING", "no LOGGING"])
def test_a_prune_refusal_is_printed_once(run_manage, monkeypatch, logging_setting):
    if logging_setting == "no LOGGING":
        monkeypatch.setenv("HG_TEST_NO_LOGGING", "1")
    done = run_manage("prune_archive_month", "209901")
    assert done.returncode == 1
    assert done.stderr.count("outside_horizon") == 1, done.stderr
    assert done.stderr.startswith("CommandError: refused (outside_horizon): '209901' is not a prepared")
