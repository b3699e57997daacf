"""A worker that fails at start, after its heartbeat row was written (its --metrics-port is
taken, or the metrics extra is missing), removes that row and says why in one line: no worker
shown live that never ran."""

import socket

import pytest

from django_headgate.models import WorkerHeartbeat
from tests.conftest import subprocess_env

pytestmark = pytest.mark.acceptance


def assert_one_line_and_no_heartbeat(done, worker_id, why):
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and why in lines[0], done.stderr
    assert not WorkerHeartbeat.objects.filter(worker_id=worker_id).exists()


def test_metrics_port_taken(run_manage):
    pytest.importorskip("prometheus_client")
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_manage("headgate_worker", "--worker-id", "port-taken", "--metrics-port", str(port), timeout=60)
    assert_one_line_and_no_heartbeat(done, "port-taken", f"--metrics-port {port}: cannot listen")


def test_metrics_extra_missing(run_manage, tmp_path):
    fake = tmp_path / "prometheus_client"
    fake.mkdir()
    (fake / "__init__.py").write_text('raise ImportError("the [metrics] extra is not installed")\n')
    env = subprocess_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    done = run_manage("headgate_worker", "--worker-id", "no-extra", "--metrics-port", str(port), env=env, timeout=60)
    assert_one_line_and_no_heartbeat(done, "no-extra", "django-headgate[metrics]")
