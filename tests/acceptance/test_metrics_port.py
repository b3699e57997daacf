"""headgate_worker --metrics-port N: /metrics shows the job counters after a drain."""

import os
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


def listening_addresses(port):
    """The local addresses of the sockets listening on ``port`` (Linux's /proc/net/tcp{,6})."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as lines:
                rows = [line.split() for line in lines.readlines()[1:]]
        except FileNotFoundError:
            continue
        for row in rows:
            address, local_port = row[1].split(":")
            if int(local_port, 16) == port and row[3] == "0A":  # TCP_LISTEN
                found.add(address)
    return found


LOOPBACK_V4 = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it (little-endian hex)
ANY_V4 = "00000000"


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="reads the listening sockets from /proc/net/tcp")
def test_the_metrics_port_listens_on_the_loopback_interface_by_default(spawn):
    port = free_port()
    worker = spawn("headgate_worker", "--queues", "metrics", "--metrics-port", str(port))
    deadline = time.monotonic() + 60
    assert "headgate_ready_jobs" in scrape(port, deadline)
    assert worker.poll() is None
    assert listening_addresses(port) == {LOOPBACK_V4}
    worker.terminate()
    worker.wait(timeout=60)

    port = free_port()
    spawn("headgate_worker", "--queues", "metrics", "--metrics-port", str(port), "--metrics-addr", "0.0.0.0")
    scrape(port, time.monotonic() + 60)
    assert listening_addresses(port) == {ANY_V4}


@pytest.mark.parametrize(("args", "error"), [
    (["--metrics-addr", "0.0.0.0"], "--metrics-addr needs --metrics-port"),
    (["--metrics-port", "9", "--metrics-addr", "example.com"], "is not an IP address"),
])
def test_metrics_addr_is_checked(run_manage, args, error):
    done = run_manage("headgate_worker", "--burst", *args, timeout=60)
    assert done.returncode != 0 and error in done.stderr, done.stderr
