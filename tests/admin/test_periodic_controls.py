"""The admin's periodic schedules page: last ticks, and Pause / Resume / Run now buttons that the
periodic duty honours, each written to the admin log."""

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from django_headgate.models import Job, PeriodicTick
from tests.support.periodic import make_duty

from .conftest import VIEW_PERMISSIONS, client_for, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def operate(client, operation, name="every_minute"):
    return client.post(reverse("admin:headgate_periodic_operate", args=[name, operation]), follow=True)


def test_pause_resume_and_run_now(every_minute, tick_clock, store):
    operator = client_for(make_user("operator", VIEW_PERMISSIONS + ("change_job",)))
    duty = make_duty(tick_clock)
    duty.run_once()
    tick_clock.advance(60)
    duty.run_once()
    assert Job.objects.filter(queue="cron").count() == 1
    page = operator.get(reverse("admin:headgate_periodic")).content.decode()
    assert "every_minute" in page and "* * * * *" in page and 'value="Pause"' in page and "running" in page

    response = operate(operator, "pause")
    assert "Periodic schedule every_minute: paused." in [str(m) for m in response.context["messages"]]
    assert 'value="Resume"' in response.content.decode()
    for _ in range(3):
        tick_clock.advance(60)
        duty.run_once()
    assert Job.objects.filter(queue="cron").count() == 1  # no tick while paused

    resumed_at = store.now()
    operate(operator, "resume")
    assert PeriodicTick.objects.get(name="every_minute").paused_at is None
    tick_clock.advance(60)
    duty.run_once()
    ticks = Job.objects.filter(queue="cron", unique_key__startswith="periodic:").order_by("run_at")
    assert ticks.count() == 2 and ticks.last().run_at > resumed_at  # the pause's ticks were skipped

    operate(operator, "run-now")
    one_off = Job.objects.filter(queue="cron", unique_key__isnull=True).get()
    assert (one_off.task, one_off.args) == ("tests.testapp.tasks.add", [1, 2])
    assert [entry.get_change_message() for entry in LogEntry.objects.order_by("pk")] == [
        "Admin pause of the periodic schedule every_minute: paused.",
        "Admin resume of the periodic schedule every_minute: resumed.",
        "Admin run-now of the periodic schedule every_minute: enqueued to run now.",
    ]


def test_viewers_see_the_schedules_but_cannot_operate(every_minute):
    auditor = client_for(make_user("auditor", VIEW_PERMISSIONS))
    page = auditor.get(reverse("admin:headgate_periodic")).content.decode()
    assert "every_minute" in page and 'value="Pause"' not in page
    assert operate(auditor, "pause").status_code == 403
    assert operate(client_for(make_user("op", VIEW_PERMISSIONS + ("change_job",))), "pause", "nope").status_code == 200
    assert not PeriodicTick.objects.filter(paused_at__isnull=False).exists()
    assert client_for(make_user("staff")).get(reverse("admin:headgate_periodic")).status_code == 403
