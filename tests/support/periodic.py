"""Schedules for the periodic duty tests, and a fake store clock on a tick grid."""

from datetime import timedelta

from django.test import override_settings

from django_headgate.conf import get_settings
from django_headgate.maintenance.periodic import PeriodicDuty
from django_headgate.store import get_store
from tests.support.clock import FakeClock

EVERY_MINUTE = {"task": "tests.testapp.tasks.add", "cron": "* * * * *", "args": [1, 2], "queue": "cron"}


def periodic_settings(schedules, **more):
    return override_settings(HEADGATE={"RETRY_BACKOFF_BASE": 0.2, "POLL_INTERVAL": 0.2,
                                       "PERIODIC": schedules, **more})


def tick_clock_of(store):
    """A fake clock 10 s after a whole minute of the store clock (a tick has just passed)."""
    now = store.now()
    return FakeClock(now.replace(second=10, microsecond=0))


def tick_of(moment):
    return moment.replace(second=0, microsecond=0)


def make_duty(clock):
    return PeriodicDuty(get_store(), get_settings(), clock=clock)


def minutes(n):
    return timedelta(minutes=n)
