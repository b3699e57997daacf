"""Fixtures for duty tests: a fake store clock (cadence without sleeping) and fresh counters."""

from datetime import timedelta

import pytest

from django_headgate import metrics
from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner


class FakeClock:
    """Store-clock stand-in for scheduling: starts at the real store time, moves only when told.
    (Row eligibility is still judged by the database's own clock inside SQL.)"""

    def __init__(self, start):
        self.now = start

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock(store):
    return FakeClock(store.now())


@pytest.fixture(autouse=True)
def _fresh_metrics():
    metrics.reset()
    yield
    metrics.reset()


@pytest.fixture
def prune_runner(clock):
    """A maintainer that runs only the heartbeat prune, on the fake clock."""
    return MaintenanceRunner(get_settings(), duty_names=["heartbeat_prune"], clock=clock)
