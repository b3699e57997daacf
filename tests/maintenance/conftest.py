"""Fixtures of the duty tests (the fake store clock and fresh counters are tests/conftest.py's)."""

import pytest

from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner


@pytest.fixture
def prune_runner(clock):
    """A maintainer that runs only the heartbeat prune, on the fake clock."""
    return MaintenanceRunner(get_settings(), duty_names=["heartbeat_prune"], clock=clock)
