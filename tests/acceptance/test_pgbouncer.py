"""Worker and maintainer processes through a real PgBouncer (tests/support/pgbouncer.py), and the
connection budget of docs/scaling.md counted in pg_stat_activity. PostgreSQL pass only."""

import signal

import pytest
from django.db import connection

import django_headgate as headgate
from django_headgate.models import Job, WorkerHeartbeat
from django_headgate.store import get_store
from tests.acceptance.helpers import finish
from tests.support.waiting import wait_for
from tests.conftest import subprocess_env
from tests.factories import JobFactory

pytestmark = pytest.mark.acceptance

RESCUE_LOCK = "headgate.duty.rescue"


def _sessions(prefix):
    """application_name -> number of server sessions whose name starts with ``prefix``."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT application_name, count(*) FROM pg_stat_activity "
                       "WHERE application_name LIKE %s GROUP BY application_name", [prefix + "%"])
        return dict(cursor.fetchall())


def _live_backends(pids):
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [list(pids)])
        return cursor.fetchone()[0]


def test_connections_of_one_worker_process_match_the_budget(spawn, tmp_path):
    """docs/scaling.md: concurrency + 3 (loop, keeper, LISTEN), + 1 with --with-maintenance,
    while every job thread's task uses the database (a direct connection: no PgBouncer)."""
    if connection.vendor != "postgresql":
        pytest.skip(f"the budget is counted in PostgreSQL's pg_stat_activity: not on the {connection.vendor} pass")
    concurrency, worker_id = 3, "budget-count"
    release = tmp_path / "release"
    for _ in range(concurrency):
        headgate.enqueue("tests.testapp.tasks.hold_connection", args=(str(tmp_path), str(release)))
    worker = spawn("headgate_worker", "--concurrency", str(concurrency), "--with-maintenance",
                   "--worker-id", worker_id)

    def job_pids():
        pids = {int(path.name) for path in tmp_path.iterdir() if path.name.isdigit()}
        return pids if len(pids) == concurrency else None

    def named_sessions():
        named = {name: n for name, n in _sessions("headgate ").items() if name.endswith(f" {worker_id}")}
        return named if len(named) == 4 else None

    pids = wait_for(job_pids, timeout=120, message="every job thread holding its connection")
    assert wait_for(named_sessions, message="the worker's named sessions") == {
        f"headgate worker {worker_id}": 1, f"headgate keeper {worker_id}": 1,
        f"headgate listener {worker_id}": 1, f"headgate maintenance {worker_id}": 1}
    assert _live_backends(pids) == concurrency
    release.touch()
    wait_for(lambda: Job.objects.filter(state="succeeded").count() == concurrency, message="the jobs done")
    worker.send_signal(signal.SIGTERM)
    returncode, _, stderr = finish(worker)
    assert returncode == 0, stderr


@pytest.mark.parametrize("mode", ["session", "transaction"])
def test_worker_drains_through_pgbouncer(pgbouncer, spawn, mode):
    worker_id = f"bouncer-{mode}"
    env = pgbouncer.subprocess_env(subprocess_env(), mode)
    worker = spawn("headgate_worker", "--concurrency", "2", "--worker-id", worker_id, "-v", "2", env=env)
    wait_for(lambda: WorkerHeartbeat.objects.filter(worker_id=worker_id).exists(), message="the heartbeat")
    if mode == "session":
        # LISTEN runs in a server session of its own behind the pooler.
        wait_for(lambda: _sessions(f"headgate listener {worker_id}"), message="the LISTEN session")
    headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.record", args=(n,)) for n in range(20)])
    wait_for(lambda: Job.objects.filter(state="succeeded").count() == 20, timeout=120, message="20 jobs done")
    worker.send_signal(signal.SIGTERM)
    returncode, _, stderr = finish(worker)
    assert returncode == 0, stderr
    polls = "transaction-pooling PgBouncer (HEADGATE['POOLING']): no LISTEN, the worker polls"
    assert (stderr.count(polls) == 1) is (mode == "transaction"), stderr
    assert not WorkerHeartbeat.objects.filter(worker_id=worker_id).exists()


@pytest.mark.parametrize("mode", ["session", "transaction"])
def test_maintainer_through_pgbouncer_respects_the_singleton_lock(pgbouncer, run_manage, mode):
    """A maintainer behind the pooler is excluded while a direct one holds the rescue lock, and
    rescues the lapsed lease once the lock is free."""
    JobFactory(running_expired=True)
    env = pgbouncer.subprocess_env(subprocess_env(), mode)

    def maintain():
        done = run_manage("headgate_maintain", "--once", "--duty", "rescue", env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    with get_store().singleton_lock(RESCUE_LOCK) as taken:
        assert taken
        assert "rescue: zero_or_contended (another maintainer held the lock) rows=0" in maintain()
    assert Job.objects.get().state == "running"
    assert "rescue: " in (out := maintain()) and "rows=1" in out, out
    assert Job.objects.get().state == "available"
