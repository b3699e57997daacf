"""@headgate.task(cron=...): the task's path is a schedule of its own, checked like the settings'."""

import pytest

from django_headgate.checks import E_PERIODIC_DECORATED, check_periodic_tasks
from django_headgate.conf import get_settings
from django_headgate.maintenance.periodic import PeriodicDuty
from django_headgate.models import Job
from django_headgate.exceptions import InvalidTaskOption
from django_headgate.registry.schedules import configured_schedules
from django_headgate.values.schedules import periodic_setting_errors
from django_headgate.registry.tasks import is_registered, register_task, unregister_task
from tests.testapp import periodic_tasks

from tests.support.periodic import EVERY_MINUTE, make_duty, periodic_settings, tick_of

pytestmark = pytest.mark.django_db(transaction=True)
PATH = "tests.testapp.periodic_tasks.heartbeat_report"


@pytest.fixture
def decorated():
    register_task(periodic_tasks.heartbeat_report, cron="* * * * *", queue="cron")
    yield
    unregister_task(PATH)


def test_a_decorated_cron_task_is_a_schedule(decorated, tick_clock):
    with periodic_settings({}):
        assert PeriodicDuty.is_enabled(get_settings())
        (schedule,) = configured_schedules({})
        assert (schedule.name, schedule.task, schedule.cron, schedule.queue, schedule.timezone) == (
            PATH, PATH, "* * * * *", "cron", "UTC")
        duty = make_duty(tick_clock)
        duty.run_once()
        tick_clock.advance(60)
        assert duty.run_once().rows == 1
    (job,) = Job.objects.filter(task=PATH)
    assert job.unique_key == f"periodic:{PATH}:{tick_of(tick_clock.now).isoformat()}" and job.queue == "cron"


def test_a_settings_schedule_of_the_same_name_wins(decorated):
    schedules = configured_schedules({PATH: {**EVERY_MINUTE, "task": "tests.testapp.tasks.add"}})
    assert [(s.name, s.task) for s in schedules] == [(PATH, "tests.testapp.tasks.add")]


@pytest.mark.parametrize("cron", ["every minute", "* * * * * *", "*/5 * * * * *", "0 0 31 2 *", " "])
def test_a_cron_the_settings_refuse_is_refused_at_decoration(cron):
    """One rule for both: six fields (cronsim's seconds) are refused like any invalid cron."""
    with periodic_settings({}):
        assert periodic_setting_errors({"s": {"task": PATH, "cron": cron}})
    with pytest.raises(InvalidTaskOption) as refused:
        register_task(periodic_tasks.heartbeat_report, cron=cron)
    assert refused.value.option == "cron" and refused.value.message.startswith("@headgate.task(cron=...): ")
    assert not is_registered(PATH)


def test_a_decorated_cron_task_whose_path_is_too_long_is_a_check_error():
    path = "tests.testapp." + "x" * 100
    register_task(periodic_tasks.heartbeat_report, name=path, cron="* * * * *")
    try:
        with periodic_settings({}):
            errors = check_periodic_tasks()
            assert configured_schedules({}) == []  # never scheduled
    finally:
        unregister_task(path)
    assert [(e.id, e.obj) for e in errors] == [(E_PERIODIC_DECORATED, path)]
    assert "longer than the 100 characters of a schedule name" in errors[0].msg
