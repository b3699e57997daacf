"""The dashboard: jobs per queue and state, finished per minute (SVG), live workers, the last
maintenance outcomes and archive rows per month."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner
from django_headgate.models import Job, JobState

from tests.factories import WorkerHeartbeatFactory

from .rows import SECRET_ARG, finish_at, make_archived, make_jobs, month_with_rows

pytestmark = pytest.mark.django_db

URL = "admin:headgate_dashboard"


def test_dashboard_shows_every_panel(auditor):
    make_jobs(2, queue="billing")
    finished = make_jobs(3, queue="emails", state=JobState.SUCCEEDED)
    finish_at(finished[0], timezone.now() - timedelta(minutes=5))
    forever = make_jobs(1, queue="emails", state=JobState.SUCCEEDED)[0]
    Job.objects.filter(pk=forever.pk).update(retention_class="forever", expires_at=None)
    WorkerHeartbeatFactory(worker_id="worker-live", queues=["billing"])
    WorkerHeartbeatFactory(worker_id="worker-gone", last_heartbeat_at=timezone.now() - timedelta(hours=1))
    make_archived(2, month=month_with_rows())
    MaintenanceRunner(get_settings(), duty_names=["rescue"]).run_once()

    response = auditor.get(reverse(URL))
    assert response.status_code == 200
    body = response.content.decode()
    context = response.context

    rows = {row.queue: row for row in context["queue_counts"]}
    assert rows["billing"].total == "2" and rows["emails"].total == "4"
    assert rows["billing"].oldest_ready_seconds is not None and rows["emails"].oldest_ready_seconds is None
    assert context["chart"]["total"] == 3  # the forever-class job has no expiry to be found by
    assert sum(1 for bar in context["chart"]["bars"] if bar["count"]) == 2
    assert len(context["chart"]["bars"]) == 60
    assert "<svg" in body and "<rect" in body
    assert "worker-live" in body and "worker-gone" not in body
    assert context["workers"]["stale_count"] == 1
    outcomes = {outcome.duty: outcome for outcome in context["duty_outcomes"]}
    assert outcomes["rescue"].status == "zero_or_contended"
    assert "zero_or_contended <span class=\"quiet\">(no rows: nothing to do, or another maintainer held the lock)" in body
    assert "never ran" in body  # the duties that did not run yet
    assert any(label == month_with_rows().label for _, label, _, _ in context["archive_rows"])
    assert SECRET_ARG not in body


def test_dashboard_needs_the_permission_to_view_jobs(staff, anonymous):
    assert staff.get(reverse(URL)).status_code == 403
    assert anonymous.get(reverse(URL)).status_code == 302


def test_dashboard_is_linked_from_the_job_list(auditor):
    assert reverse(URL) in auditor.get(reverse("admin:headgate_job_changelist")).content.decode()
