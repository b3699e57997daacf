"""The admin's cancel of a running job requests its abort (as cancel() does) and says so."""

from django.urls import reverse

from django_headgate.models import Job, JobState

from .rows import make_jobs
from .test_job_admin import change_url, post_action


def test_cancel_action_requests_the_abort_of_running_jobs(operator):
    available = make_jobs(1)
    running = make_jobs(2, state=JobState.RUNNING)
    response = post_action(operator, "cancel_jobs", available + running)
    messages = [str(m) for m in response.context["messages"]]
    assert "1 job(s) cancelled, 2 running job(s) asked to abort (1 batch(es))." in messages
    rows = Job.objects.filter(pk__in=[j.pk for j in running])
    assert {(row.state, row.abort_requested_at is not None) for row in rows} == {("running", True)}
    assert Job.objects.get(pk=available[0].pk).state == "cancelled"


def test_detail_button_on_a_running_job_requests_its_abort(operator):
    (job,) = make_jobs(1, state=JobState.RUNNING)
    response = operator.post(reverse("admin:headgate_job_cancel", args=[job.pk]), follow=True)
    assert any("abort requested" in str(m) for m in response.context["messages"])
    row = Job.objects.get(pk=job.pk)
    assert row.state == "running" and row.abort_requested_at is not None
    page = operator.get(change_url(job)).content.decode()
    assert "Abort requested at" in page or "abort requested at" in page.lower()
