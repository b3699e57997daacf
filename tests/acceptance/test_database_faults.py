"""Faults of the database itself, on a private PostgreSQL instance: a restart during the
SIGTERM drain (no re-execution, no row left running) and a frozen server process under the
claim loop (the watchdog stops renewal, the worker exits 4, the job is rescued)."""

import json
import os
import signal
import tempfile
import time

import pytest

from tests.acceptance.helpers import finish
from tests.acceptance.private_postgres import private_postgres  # noqa: F401 (fixture)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.acceptance


def test_restart_during_the_drain_loses_nothing_and_runs_nothing_twice(private_postgres):
    server = private_postgres
    marker = tempfile.NamedTemporaryFile(delete=False).name
    server.enqueue("tests.testapp.tasks.sleep_marking", json.dumps([3, marker, "done"]), count=4)
    worker = server.spawn("headgate_worker", "--concurrency", "4", "--worker-id", "drainer",
                          HG_TEST_SHUTDOWN_TIMEOUT="20")
    try:
        wait_for(lambda: server.states().get("running") == 4, message="four running jobs")
        worker.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        server.stop_fast()  # the jobs finish while the database is down
        wait_for(lambda: time.time() > os.path.getmtime(marker) + 3.5, timeout=30,  # the last start + its 3 s
                 message="the jobs to finish while the database is down")
        server.start()
        returncode, stdout, stderr = finish(worker, timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert returncode == 0, stderr
    assert "Traceback" not in stderr
    assert len(stderr.splitlines()) <= 12, stderr  # rate-limited: about one line a second per event
    assert server.states() == {"succeeded": 4}
    with open(marker) as lines:
        assert len(lines.readlines()) == 4  # each job ran once
    os.unlink(marker)
    assert "4 succeeded" in stdout


def test_frozen_server_process_stops_renewal_and_the_job_is_rescued(private_postgres):
    server = private_postgres
    marker = tempfile.NamedTemporaryFile(delete=False).name
    server.enqueue("tests.testapp.tasks.sleep_marking", json.dumps([30, marker]))
    worker = server.spawn("headgate_worker", "--concurrency", "1", "--lease-seconds", "5",
                          "--worker-id", "frozen-db")
    frozen = []
    try:
        wait_for(lambda: server.states().get("running") == 1, message="the job to start")
        wait_for(lambda: os.path.getsize(marker) > 0, message="the task to begin")
        backends = server.sql("SELECT pid FROM pg_stat_activity WHERE datname = 'hgprivate' "
                              "AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
        for (pid,) in backends:  # the worker's connections: like a half-open link, nothing answers
            os.kill(pid, signal.SIGSTOP)
            frozen.append(pid)
        returncode, _, stderr = finish(worker, timeout=30)
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
        if worker.poll() is None:
            worker.kill()
    assert returncode == 4, stderr
    assert "made no progress" in stderr
    wait_for(lambda: server.sql("SELECT lease_expires_at < now() FROM headgate_job")[0][0], timeout=15,
             message="the lease to lapse")
    rescued = server.manage("headgate_maintain", "--once", "--duty", "rescue")
    assert "rescued rows=1" in rescued.stdout, rescued.stderr
    assert server.states() == {"available": 1}
    os.unlink(marker)
