"""headgate_worker --metrics-port N: /metrics shows the job counters after a drain."""

import socket
import time
import urllib.request

import pytest

pytest.importorskip("prometheus_client")

import django_headgate as headgate  # noqa: E402
from django_headgate.models import Job  # noqa: E402

pytestmark = pytest.mark.acceptance


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scrape(port, deadline):
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                return response.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_metrics_show_the_drained_jobs(spawn):
    for n in range(3):
        headgate.enqueue("tests.testapp.tasks.add", args=(n, 1), queue="metrics")
    port = free_port()
    worker = spawn("headgate_worker", "--queues", "metrics", "--metrics-port", str(port))
    deadline = time.monotonic() + 60
    while Job.objects.filter(queue="metrics", state="succeeded").count() < 3:
        assert worker.poll() is None, worker.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.2)
    text = scrape(port, deadline)
    while 'headgate_jobs_total{outcome="succeeded",queue="metrics",task="tests.testapp.tasks.add"} 3.0' not in text:
        assert time.monotonic() < deadline, text
        time.sleep(0.2)
        text = scrape(port, deadline)
    assert 'headgate_job_duration_seconds_count{queue="metrics",task="tests.testapp.tasks.add"} 3.0' in text
    assert "headgate_ready_jobs" in text
    for private in ("job_id", "worker_id", "hostname"):
        assert private not in text
