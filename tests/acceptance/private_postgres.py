"""A PostgreSQL instance of the test's own (pg_createcluster on a free port), for tests that
restart or freeze the server: the machine's shared servers are never signalled."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSION = "15"
DB_NAME = "hgprivate"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrivatePostgres:
    def __init__(self):
        self.name = f"hgtest{os.getpid()}"
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/{DB_NAME}"

    def create(self):
        subprocess.run(["pg_createcluster", VERSION, self.name, "--port", str(self.port), "--",
                        "--auth=trust"], check=True, capture_output=True, timeout=120)
        self.start()
        self.sql(f"CREATE DATABASE {DB_NAME}", database="postgres")

    def start(self):
        subprocess.run(["pg_ctlcluster", VERSION, self.name, "start"], check=True, capture_output=True, timeout=60)

    @property
    def postmaster_pid(self):
        pid_file = Path(f"/var/lib/postgresql/{VERSION}/{self.name}/postmaster.pid")
        return int(pid_file.read_text().split()[0]) if pid_file.exists() else None

    def stop_fast(self):
        """Fast shutdown by signal to this instance's postmaster PID; waits until it is gone."""
        pid = self.postmaster_pid
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        raise AssertionError("the private PostgreSQL did not stop")

    def drop(self):
        if self.postmaster_pid is not None:
            self.stop_fast()
        subprocess.run(["pg_dropcluster", VERSION, self.name], capture_output=True, timeout=60)

    def sql(self, statement, params=(), database=DB_NAME):
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname={database}",
                             autocommit=True) as conn:
            cursor = conn.execute(statement, params)
            return cursor.fetchall() if cursor.description else None

    def env(self, **extra):
        env = dict(os.environ)
        env.pop("HG_TEST_DB_NAME", None)
        env.update(DJANGO_SETTINGS_MODULE="tests.settings", DATABASE_URL=self.url,
                   PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""), **extra)
        return env

    def manage(self, *args, timeout=120, **env):
        return subprocess.run([sys.executable, "-m", "django", *args], env=self.env(**env), cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)

    def spawn(self, *args, **env):
        return subprocess.Popen([sys.executable, "-m", "django", *args], env=self.env(**env), cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def enqueue(self, task, args_json, count=1):
        self.sql(
            "INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts, "
            "max_attempts, fence, fingerprint, errors, tags, retention_class, created_at) "
            "SELECT gen_random_uuid(), 'default', %s, %s::jsonb, '{}', 0, 'available', now(), 0, 3, 0, "
            "'x', '[]', '[]', 'standard_30d', now() FROM generate_series(1, %s)", (task, args_json, count))

    def states(self):
        return dict(self.sql("SELECT state, count(*) FROM headgate_job GROUP BY state"))


@pytest.fixture
def private_postgres(vendor):
    if vendor != "postgresql":
        pytest.skip("runs its own PostgreSQL instance (pg_createcluster); the other vendors' fault "
                    "tests are in-process")
    if shutil.which("pg_createcluster") is None or os.geteuid() != 0:
        pytest.skip("needs pg_createcluster and root to run a private PostgreSQL instance")
    server = PrivatePostgres()
    server.create()
    try:
        migrated = server.manage("migrate", "--verbosity", "0")
        assert migrated.returncode == 0, migrated.stderr
        yield server
    finally:
        server.drop()
