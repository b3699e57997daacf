"""Worker and maintainer processes through a real PgBouncer (tests/pgbouncer.py), and the
connection budget of docs/scaling.md counted in pg_stat_activity. PostgreSQL pass only."""

import signal
import subprocess

import pytest
from django.db import connection

import django_headgate as headgate
from django_headgate.models import Job, WorkerHeartbeat
from django_headgate.store import get_store
from tests.acceptance.helpers import finish, wait_for
from tests.conftest import ROOT, manage_command, subprocess_env
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


@pytest.fixture
def spawn_env(transactional_db):
    """Start ``manage.py <args>`` with an environment of the test's choosing; killed at teardown."""
    processes = []

    def start(env, *args):
        process = subprocess.Popen(manage_command(*args), env=env, cwd=ROOT, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        processes.append(process)
        return process

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=10)


def test_connections_of_one_worker_process_match_the_budget(pgbouncer, spawn_env, tmp_path):
    """docs/scaling.md: concurrency + 3 (loop, keeper, LISTEN), + 1 with --with-maintenance,
    while every job thread's task uses the database."""
    concurrency, worker_id = 3, "budget-count"
    release = tmp_path / "release"
    for _ in range(concurrency):
        headgate.enqueue("tests.testapp.tasks.hold_connection", args=(str(tmp_path), str(release)))
    worker = spawn_env(subprocess_env(), "headgate_worker", "--concurrency", str(concurrency),
                       "--with-maintenance", "--worker-id", worker_id)
    job_pids = wait_for(lambda: {int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()} if len(
        [p for p in tmp_path.iterdir() if p.name.isdigit()]) == concurrency else None,
        timeout=120, message="every job thread holding its connection")
    named = wait_for(lambda: (found := _sessions("headgate ")) and len(
        [n for n in found if n.endswith(worker_id)]) == 4 and found, timeout=60, message="the named sessions")
    assert {name: n for name, n in named.items() if name.endswith(worker_id)} == {
        f"headgate worker {worker_id}": 1, f"headgate keeper {worker_id}": 1,
        f"headgate listener {worker_id}": 1, f"headgate maintenance {worker_id}": 1}
    assert _live_backends(job_pids) == concurrency
    release.touch()
    wait_for(lambda: Job.objects.filter(state="succeeded").count() == concurrency, message="the jobs done")
    worker.send_signal(signal.SIGTERM)
    returncode, _, stderr = finish(worker)
    assert returncode == 0, stderr


@pytest.mark.parametrize("mode", ["session", "transaction"])
def test_worker_drains_through_pgbouncer(pgbouncer, spawn_env, mode):
    worker_id = f"bouncer-{mode}"
    env = pgbouncer.subprocess_env(subprocess_env(), mode)
    worker = spawn_env(env, "headgate_worker", "--concurrency", "2", "--worker-id", worker_id, "-v", "2")
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
def test_maintainer_through_pgbouncer_respects_the_singleton_lock(pgbouncer, transactional_db, mode):
    """A maintainer behind the pooler is excluded while a direct one holds the rescue lock, and
    rescues the lapsed lease once the lock is free."""
    JobFactory(running_expired=True)
    env = pgbouncer.subprocess_env(subprocess_env(), mode)
    command = manage_command("headgate_maintain", "--once", "--duty", "rescue")

    def maintain():
        done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    with get_store().singleton_lock(RESCUE_LOCK) as taken:
        assert taken
        assert "rescue: zero_or_contended rows=0" in maintain()
    assert Job.objects.get().state == "running"
    assert "rescue: " in (out := maintain()) and "rows=1" in out, out
    assert Job.objects.get().state == "available"
