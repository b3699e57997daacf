"""The unique keys ``periodic:<schedule>:<tick>`` are the periodic duty's alone: a caller cannot
take a tick's key first (with a 30-day delay that tick would run a month late, with other
arguments it would never run). Every enqueue path refuses the namespace before writing, in any
case or accent a case- and accent-insensitive collation (MariaDB's usual _ci) would equate."""

from datetime import timedelta

import django
import pytest

import django_headgate as headgate
from django_headgate.exceptions import InvalidUniqueKey
from django_headgate.models import Job

from tests.support.periodic import EVERY_MINUTE, make_duty, tick_of

pytestmark = pytest.mark.django_db(transaction=True)

RESERVED = ["periodic:every_minute:2026-01-01T00:00:00+00:00", "periodic:", "PERIODIC:x", "Periodic:x",
            "périodic:x", "ｐｅｒｉｏｄｉｃ:x", "peri\u200bodic:x", "periodic\u00ad:x", "per\u0130odic:x"]


@pytest.mark.parametrize("key", RESERVED)
def test_enqueue_refuses_the_namespace_before_writing(key):
    with pytest.raises(InvalidUniqueKey) as refused:
        headgate.enqueue("tests.testapp.tasks.noop", unique_key=key, delay=timedelta(days=30))
    assert (refused.value.field, refused.value.reason) == ("unique_key", "reserved_prefix")
    with pytest.raises(InvalidUniqueKey):
        headgate.enqueue("tests.testapp.tasks.noop", unique_key=key, unique_until="finished")
    assert Job.objects.count() == 0


@pytest.mark.parametrize("key", ["periodical", "periodic-report", "my:periodic:x", " periodic:x", "per iodic:x"])
def test_other_keys_are_yours(key):
    assert headgate.enqueue("tests.testapp.tasks.noop", unique_key=key).unique_key == key


def test_a_tick_cannot_be_squatted(every_minute, tick_clock):
    duty = make_duty(tick_clock)
    duty.run_once()  # the schedule is first seen
    tick_clock.advance(60)
    tick = tick_of(tick_clock.now)
    key = f"periodic:every_minute:{tick.isoformat()}"
    for squatter in (key, key.upper()):  # upper: the same key under MariaDB's _ci collation
        with pytest.raises(InvalidUniqueKey):
            headgate.enqueue(EVERY_MINUTE["task"], args=EVERY_MINUTE["args"], queue="cron", unique_key=squatter,
                             delay=timedelta(days=30))
    assert duty.run_once().rows == 1
    job = Job.objects.get(unique_key=key)
    assert (job.run_at, job.args) == (tick, [1, 2])


def test_enqueue_many_cannot_name_a_key():
    with pytest.raises(TypeError):
        headgate.JobSpec("tests.testapp.tasks.noop", unique_key="periodic:x")


@pytest.mark.skipif(django.VERSION < (6, 0), reason="Django's Tasks framework needs Django >= 6.0")
def test_the_tasks_backend_refuses_the_namespace():
    from django.tasks.exceptions import InvalidTask

    from tests.testapp import django_tasks

    with pytest.raises(InvalidTask, match="reserved"):
        django_tasks.add.using(unique_key="PERIODIC:every_minute:x").enqueue(1, 2)
    assert Job.objects.count() == 0
