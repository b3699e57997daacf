"""Two maintainers at once enqueue one job per tick: threads (with and without the duty's lock)
and two ``headgate_maintain`` processes."""

import subprocess
from datetime import timedelta

import pytest

from django_headgate.conf import get_settings
from django_headgate.maintenance.periodic import PeriodicDuty
from django_headgate.models import Job, PeriodicTick
from django_headgate.store import get_store
from tests.conftest import ROOT, manage_command, subprocess_env
from tests.support.periodic import make_duty, tick_of
from tests.support.threads import run_at_once

pytestmark = pytest.mark.django_db(transaction=True)


def keys():
    return sorted(Job.objects.filter(unique_key__startswith="periodic:").values_list("unique_key", flat=True))


def test_two_maintainer_threads_enqueue_one_job_per_tick(every_minute, tick_clock):
    make_duty(tick_clock).run_once()
    expected = []
    for _ in range(5):
        tick_clock.advance(60)
        expected.append(f"periodic:every_minute:{tick_of(tick_clock.now).isoformat()}")
        outcomes = run_at_once(2, lambda: make_duty(tick_clock).run_once())
        assert sorted(o.rows for o in outcomes) == [0, 1]
    assert keys() == expected


def test_without_the_lock_the_cursor_alone_keeps_a_tick_single(every_minute, tick_clock):
    """The singleton lock is per process on SQLite: two processes can both run the pass."""
    make_duty(tick_clock).run_once()
    for _ in range(5):
        tick_clock.advance(60)
        now = tick_clock.now

        def pass_without_lock():
            duty = PeriodicDuty(get_store(), get_settings(), clock=tick_clock)
            return duty.enqueue_due(duty.schedules[0], now)

        assert sorted(run_at_once(2, pass_without_lock)) == [0, 1]
    assert len(keys()) == 5
    assert PeriodicTick.objects.get(name="every_minute").last_tick_at == tick_of(tick_clock.now)


def test_two_maintainer_processes_enqueue_the_tick_once(store):
    PeriodicTick.objects.create(name="yearly", first_seen_at=store.now() - timedelta(days=800))
    env = {**subprocess_env(), "DJANGO_SETTINGS_MODULE": "tests.periodic_settings"}
    processes = [subprocess.Popen(manage_command("headgate_maintain", "--once", "--duty", "periodic"),
                                  env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
    reports = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        reports.append(stdout.split()[1])
    # Either the lock made one pass wait out (contended) or both ran and the cursor refused one.
    assert sorted(reports) == ["enqueued", "zero_or_contended"]
    (key,) = keys()
    assert key == f"periodic:yearly:{store.now().year}-01-01T00:00:00+00:00"
