"""A PgBouncer of the test run's own (the Debian package's binary, an ini in a temporary
directory, a free port), in front of the shared PostgreSQL, with one pool per pooling mode:
database ``hg_session`` (session pooling) and ``hg_transaction`` (transaction pooling), both the
test database. Started once per run by the ``pgbouncer`` fixture, stopped by its PID.

PostgreSQL pass only. Without the binary the tests skip, unless HG_REQUIRE_ALL_VENDORS=1 (CI,
where ``.ci/run`` installs it): then they fail."""

import os
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection, connections
from django.test import override_settings

from django_headgate import store as store_package

MODES = ("session", "transaction")
#: Database aliases of the test process through the pools: name -> pooling mode.
ALIASES = {"bouncer_session": "session", "bouncer_transaction": "transaction",
           "bouncer_transaction_b": "transaction"}
POOL_SIZE = 8  # server connections per pool: a worker, a maintainer and the test process fit
SEARCHED = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")


def pgbouncer_binary():
    found = shutil.which("pgbouncer")
    return found or next((path for path in SEARCHED if os.access(path, os.X_OK)), None)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PgBouncer:
    def __init__(self, binary, target):
        self.binary = binary
        self.target = target  # the test database's settings_dict
        self.port = free_port()
        self.user = target["USER"] or "postgres"
        self.directory = Path(tempfile.mkdtemp(prefix="hg-pgbouncer-"))
        self.process = None

    def database(self, mode):
        return f"hg_{mode}"

    def url(self, mode):
        return f"postgres://{self.user}@127.0.0.1:{self.port}/{self.database(mode)}"

    def _ini(self):
        host, port = self.target["HOST"] or "127.0.0.1", self.target["PORT"] or 5432
        pools = "\n".join(
            f"{self.database(mode)} = host={host} port={port} dbname={self.target['NAME']} pool_mode={mode}"
            for mode in MODES)
        return f"""[databases]
{pools}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.port}
unix_socket_dir =
auth_type = trust
auth_file = {self.directory / 'users.txt'}
logfile = {self.directory / 'pgbouncer.log'}
default_pool_size = {POOL_SIZE}
max_client_conn = 100
"""

    def start(self):
        (self.directory / "users.txt").write_text(f'"{self.user}" ""\n')
        (self.directory / "pgbouncer.ini").write_text(self._ini())
        command = [self.binary]
        if os.geteuid() == 0:  # PgBouncer refuses to run as root
            shutil.chown(self.directory, "postgres")
            for path in self.directory.iterdir():
                shutil.chown(path, "postgres")
            command += ["-u", "postgres"]
        self.process = subprocess.Popen([*command, str(self.directory / "pgbouncer.ini")],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"pgbouncer exited {self.process.returncode}: {self.log()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"pgbouncer does not listen on {self.port}: {self.log()}")

    def log(self):
        path = self.directory / "pgbouncer.log"
        return path.read_text()[-2000:] if path.exists() else ""

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # SIGTERM to this PID: immediate shutdown
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.directory, ignore_errors=True)

    def subprocess_env(self, env, mode):
        """``env`` (tests.conftest.subprocess_env()) pointed at this PgBouncer's pool of ``mode``."""
        return {**env, "DATABASE_URL": self.url(mode), "HG_TEST_DB_NAME": self.database(mode),
                "HG_TEST_POOLING": mode}

    def register_aliases(self):
        """Add the ALIASES to this process's connections (a test that uses one lists it in its
        ``django_db(databases=...)``)."""
        for name, mode in ALIASES.items():
            connections.settings[name] = {
                **connections["default"].settings_dict, "HOST": "127.0.0.1", "PORT": str(self.port),
                "NAME": self.database(mode), "DISABLE_SERVER_SIDE_CURSORS": True, "OPTIONS": {},
                "TEST": {"MIRROR": "default"},  # the test database itself: never flushed twice
            }

    def unregister_aliases(self):
        for name in ALIASES:
            connections[name].close()
            del connections[name]
            del connections.settings[name]
            store_package._stores.pop(name, None)

    @contextmanager
    def pooling(self, *names):
        """HEADGATE["POOLING"] naming each alias of ``names`` with its pool's mode."""
        pooling = {**settings.HEADGATE.get("POOLING", {}), **{name: ALIASES[name] for name in names}}
        with override_settings(HEADGATE={**settings.HEADGATE, "POOLING": pooling}):
            yield


@pytest.fixture(scope="session")
def pgbouncer(django_db_setup, django_db_blocker):
    if connection.vendor != "postgresql":
        pytest.skip(f"PgBouncer pools PostgreSQL connections: not on the {connection.vendor} pass")
    binary = pgbouncer_binary()
    if binary is None:
        reason = "pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it)"
        if os.environ.get("HG_REQUIRE_ALL_VENDORS") == "1":
            pytest.fail(f"{reason}, and HG_REQUIRE_ALL_VENDORS=1")
        pytest.skip(reason)
    bouncer = PgBouncer(binary, connection.settings_dict)
    bouncer.start()
    bouncer.register_aliases()
    yield bouncer
    bouncer.unregister_aliases()
    bouncer.stop()
