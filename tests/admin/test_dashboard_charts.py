"""The dashboard's 24-hour charts (issue 22, item 7): outcomes per hour and ready depth per queue,
read from the dashboard samples only (never from the hot table), scheduled jobs apart from ready
ones, and what the page says when no sample is being taken."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from django_headgate.admin.charts import MAX_DEPTH_LINES, PALETTE
from django_headgate.admin.dashboard import sample_charts
from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner
from django_headgate.models import DutyRun, JobState
from django_headgate.store import get_store

from tests.support.samples import finished_jobs, live_jobs, place_samples

pytestmark = pytest.mark.django_db

URL = "admin:headgate_dashboard"
HOUR = timedelta(hours=1)


def hour_start(moment):
    return moment.replace(minute=0, second=0, microsecond=0)


def test_outcomes_per_hour_add_up_the_samples_of_each_hour(auditor):
    now = get_store().now()
    this_hour = hour_start(now)
    place_samples(2, this_hour - 3 * HOUR + timedelta(minutes=10), queue="mail", succeeded=5, retried=1, dead=1)
    place_samples(1, this_hour - 3 * HOUR + timedelta(minutes=40), queue="video", succeeded=1)
    place_samples(1, this_hour - 30 * HOUR, queue="mail", succeeded=1000)  # older than the chart
    place_samples(1, now, queue="mail", dead=2)

    context = auditor.get(reverse(URL)).context
    chart = context["outcome_chart"]
    assert len(chart["bars"]) == 24
    by_hour = {bar["hour"]: (bar["succeeded"], bar["retried"], bar["dead"]) for bar in chart["bars"]}
    assert by_hour[this_hour - 3 * HOUR] == (11, 2, 2)
    assert by_hour[this_hour] == (0, 0, 2)
    assert chart["totals"] == {"succeeded": 11, "retried": 2, "dead": 4}
    assert chart["peak"] == 15
    tallest = next(bar for bar in chart["bars"] if bar["hour"] == this_hour - 3 * HOUR)
    assert [s["key"] for s in tallest["segments"]] == ["succeeded", "retried", "dead"]  # bottom to top
    assert tallest["segments"][-1]["y"] == 0  # the busiest hour reaches the top
    assert {s["pattern"] for s in tallest["segments"]} == {None, "headgate-hatch", "headgate-dots"}


def test_ready_depth_per_queue_with_scheduled_jobs_apart(auditor):
    now = get_store().now()
    this_hour = hour_start(now)
    place_samples(1, this_hour - 5 * HOUR, queue="mail", available=40, scheduled=7)
    place_samples(1, this_hour - 5 * HOUR + timedelta(minutes=1), queue="mail", available=90, scheduled=7)
    place_samples(1, now, queue="mail", available=12, scheduled=300)
    place_samples(1, now, queue="video", available=3)

    chart = auditor.get(reverse(URL)).context["depth_chart"]
    mail, video = chart["lines"]
    assert (mail["queue"], mail["peak"], mail["ready_now"], mail["scheduled_now"]) == ("mail", 90, 12, 300)
    assert (video["queue"], video["peak"], video["ready_now"], video["scheduled_now"]) == ("video", 3, 3, 0)
    assert chart["peak"] == 90  # scheduled jobs are not ready: 300 does not raise the chart
    assert mail["colour"] != video["colour"] and mail["dash"] != video["dash"]
    # mail was sampled 5 hours ago and now: two pieces of line, each of one point.
    assert len(mail["points"]) == 2 and len(mail["dots"]) == 2


def test_queues_beyond_the_palette_are_listed_not_drawn(auditor):
    now = get_store().now()
    for n in range(MAX_DEPTH_LINES + 2):
        place_samples(1, now, queue=f"q{n}", available=100 - n)
    response = auditor.get(reverse(URL))
    chart = response.context["depth_chart"]
    assert [line["queue"] for line in chart["lines"]] == [f"q{n}" for n in range(MAX_DEPTH_LINES)]
    assert [line["colour"] for line in chart["lines"]] == list(PALETTE)
    assert [depth.queue for depth in chart["undrawn"]] == ["q6", "q7"]
    assert "q7 <span class=\"quiet\">(not drawn)</span>" in response.content.decode()


def test_the_duty_feeds_the_charts(auditor):
    store = get_store()
    now = store.now()
    live_jobs(now, "mail", ready=4, scheduled=2)
    finished_jobs(3, "mail", now - timedelta(minutes=1), attempts=2)
    finished_jobs(1, "mail", now - timedelta(minutes=1), state=JobState.DEAD, attempts=3)
    MaintenanceRunner(get_settings(), duty_names=["dashboard_sample"]).run_once()

    response = auditor.get(reverse(URL))
    context = response.context
    assert context["outcome_chart"]["totals"] == {"succeeded": 3, "retried": 5, "dead": 1}
    (line,) = context["depth_chart"]["lines"]
    assert (line["queue"], line["ready_now"], line["scheduled_now"]) == ("mail", 4, 2)
    assert not context["samples_overdue"]
    assert "Newest sample:" in response.content.decode()


def test_the_charts_never_read_the_hot_table():
    store = get_store()
    now = store.now()
    place_samples(3, now, queue="mail", available=5, succeeded=2)
    with CaptureQueriesContext(connection) as queries:
        sample_charts(now, get_settings(), [])
    tables = " ".join(query["sql"] for query in queries.captured_queries)
    assert "headgate_queue_sample" in tables
    assert "headgate_job" not in tables.replace("headgate_queue_sample", "")


def test_the_page_says_when_no_sample_is_taken(auditor, settings):
    body = auditor.get(reverse(URL)).content.decode()
    assert "No sample yet: the dashboard_sample duty runs in headgate_maintain" in body
    assert "No queue sampled in the last 24 hours." in body

    now = get_store().now()
    place_samples(1, now - 3 * HOUR, queue="mail")
    DutyRun.objects.record(duty="dashboard_sample", status="sampled", rows=1, batches=1, seconds=0.01,
                           started_at=now - 3 * HOUR, finished_at=now - 3 * HOUR, next_run_at=None)
    body = auditor.get(reverse(URL)).content.decode()
    assert "The dashboard_sample duty last ran at" in body

    settings.HEADGATE = {**settings.HEADGATE, "DASHBOARD": {"ENABLED": False}}
    assert "Sampling is paused" in auditor.get(reverse(URL)).content.decode()


def test_an_idle_installation_is_not_taken_for_a_stopped_duty(auditor):
    """With no job anywhere a pass writes no row: the duty's last pass, not the newest row,
    says whether sampling runs."""
    place_samples(1, get_store().now() - 3 * HOUR, queue="mail")
    outcome = MaintenanceRunner(get_settings(), duty_names=["dashboard_sample"]).run_once()
    assert [o.rows for o in outcome] == [0]
    response = auditor.get(reverse(URL))
    assert not response.context["samples_overdue"]
    assert "The dashboard_sample duty last ran" not in response.content.decode()
