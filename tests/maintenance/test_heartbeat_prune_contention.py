"""Two maintainers at once: one prunes, the other reports zero_or_contended; no deadlock, no
error; a contended pass does not overwrite the recorded outcome."""

import threading

import pytest
from django.db import connections

from django_headgate.conf import get_settings
from django_headgate.maintenance.heartbeat_prune import HeartbeatPruneDuty
from django_headgate.models import DutyRun
from django_headgate.store import get_store
from tests.support.heartbeat_rows import make_heartbeats, remaining

from tests.support.blockers import held_on_another_connection, hold_duty_lock

pytestmark = pytest.mark.django_db(transaction=True)


def test_contended_lock_is_skipped(store, clock):
    make_heartbeats(10, prefix="stale")
    duty = HeartbeatPruneDuty(store, get_settings(), clock=clock)
    with held_on_another_connection(hold_duty_lock("heartbeat_prune")):
        outcome = duty.run_once()
    assert (outcome.status, outcome.rows, outcome.batches, outcome.contended) == ("zero_or_contended", 0, 0, True)
    assert remaining("stale") == 10
    assert not DutyRun.objects.filter(duty="heartbeat_prune").exists()  # only a lock holder records


class PausedPrune(HeartbeatPruneDuty):
    """Holds its lock until told to go on, so that two passes surely overlap."""

    entered = None
    go_on = None

    def run_batch(self, limit):
        self.entered.set()
        assert self.go_on.wait(20)
        return super().run_batch(limit)


def test_two_maintainers_at_once_one_prunes_the_other_is_contended(clock):
    make_heartbeats(1200, prefix="stale")
    PausedPrune.entered, PausedPrune.go_on = threading.Event(), threading.Event()
    outcomes, errors = [], []
    finished = threading.Semaphore(0)

    def maintainer():  # each thread has its own database connection
        try:
            outcomes.append(PausedPrune(get_store(), get_settings(), clock=clock).run_once())
        except Exception as exc:
            errors.append(exc)
        finally:
            connections.close_all()
            finished.release()

    threads = [threading.Thread(target=maintainer) for _ in range(2)]
    for thread in threads:
        thread.start()
    assert PausedPrune.entered.wait(20)
    assert finished.acquire(timeout=20)  # the second maintainer returned while the first holds the lock
    PausedPrune.go_on.set()
    for thread in threads:
        thread.join(20)
        assert not thread.is_alive()
    assert errors == []
    assert sorted((o.status, o.rows, o.contended) for o in outcomes) == [
        ("deleted", 500, False), ("zero_or_contended", 0, True),
    ]
    assert remaining("stale") == 700
    assert DutyRun.objects.get(duty="heartbeat_prune").status == "deleted"


@pytest.mark.slow
def test_two_maintainer_processes_at_once_never_error(spawn):
    make_heartbeats(1200, prefix="stale")
    processes = [spawn("headgate_maintain", "--once", "--duty", "heartbeat_prune") for _ in range(2)]
    reports = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        reports.append(stdout.strip())
    statuses = sorted(line.split()[1] for line in reports)
    assert statuses in (["deleted", "deleted"], ["deleted", "zero_or_contended"])
    assert remaining("stale") == 1200 - 500 * statuses.count("deleted")


@pytest.mark.slow
def test_a_maintainer_process_skips_a_lock_held_elsewhere(run_manage, store):
    if store.vendor == "sqlite":
        pytest.skip("SQLite's singleton lock is per process (documented)")
    make_heartbeats(10, prefix="stale")
    with held_on_another_connection(hold_duty_lock("heartbeat_prune")):
        result = run_manage("headgate_maintain", "--once", "--duty", "heartbeat_prune")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:2] == ["heartbeat_prune:", "zero_or_contended"]
    assert remaining("stale") == 10
