"""Fixtures for duty tests: a fake store clock (cadence without sleeping) and fresh counters."""

import pytest

from django_headgate import metrics
from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner
from tests.support.clock import FakeClock


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
