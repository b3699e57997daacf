"""List actions on "all N matching" (select-across): a confirmation page with the count, bounded
batches, one LogEntry per action; run-now and reschedule actions."""

from datetime import timedelta

from django.contrib.admin.models import CHANGE, LogEntry
from django.urls import reverse
from django.utils import timezone

from django_headgate.models import Job, JobState

from .rows import make_jobs
from .test_job_admin import CHANGELIST

CONFIRMED = {"headgate_confirm": "yes", "index": "0"}


def act_on_all_matching(client, action, filters, *, confirm=True, **extra):
    """The changelist's action form with "Select all N" clicked (one ticked row, select_across=1)."""
    first = Job.objects.order_by("-pk").first()
    data = {"action": action, "select_across": "1", "_selected_action": [first.pk], **extra}
    if confirm:
        data.update(CONFIRMED)
    return client.post(f"{reverse(CHANGELIST)}?{filters}", data, follow=True)


def test_the_list_offers_select_all_n_to_an_operator(operator, auditor):
    make_jobs(60, state=JobState.DEAD)
    page = operator.get(reverse(CHANGELIST), {"state__exact": "dead"}).content.decode()
    assert "Select all 60" in page
    assert "Select all" not in auditor.get(reverse(CHANGELIST)).content.decode()


def test_retry_all_2000_matching_in_batches_with_one_log_entry(operator):
    dead = make_jobs(2000, state=JobState.DEAD, queue="billing")
    other_queue = make_jobs(5, state=JobState.DEAD, queue="emails")
    running = make_jobs(3, state=JobState.RUNNING, queue="billing")
    page = act_on_all_matching(operator, "retry_jobs", "queue=billing", confirm=False).content.decode()
    assert "Retry <strong>2000</strong> jobs" in page and "all jobs matching the filter" in page
    assert Job.objects.filter(state="dead").count() == 2005  # nothing changed before the confirmation

    response = act_on_all_matching(operator, "retry_jobs", "queue=billing")
    assert "2000 job(s) retried (4 batch(es))." in [str(m) for m in response.context["messages"]]
    assert set(Job.objects.filter(pk__in=[j.pk for j in dead]).values_list("state", flat=True)) == {"available"}
    assert set(Job.objects.filter(pk__in=[j.pk for j in other_queue]).values_list("state", flat=True)) == {"dead"}
    assert set(Job.objects.filter(pk__in=[j.pk for j in running]).values_list("state", "fence")) == {("running", 0)}
    (entry,) = LogEntry.objects.filter(action_flag=CHANGE)
    assert entry.get_change_message() == (
        "Admin retry of all matching jobs; filter: queue=billing; 2000 changed in 4 batches.")


def test_run_now_and_reschedule_actions(operator):
    later = make_jobs(3)
    Job.objects.update(run_at=timezone.now() + timedelta(hours=3))
    response = act_on_all_matching(operator, "run_jobs_now", "state__exact=available")
    assert "3 job(s) made due now (1 batch(es))." in [str(m) for m in response.context["messages"]]
    assert all(job.run_at <= timezone.now() for job in Job.objects.all())

    page = act_on_all_matching(operator, "reschedule_jobs", "", confirm=False).content.decode()
    assert 'name="run_at"' in page
    again = act_on_all_matching(operator, "reschedule_jobs", "", run_at="not a time").content.decode()
    assert 'name="run_at"' in again and "errorlist" in again  # asked again, nothing changed
    at = timezone.now() + timedelta(days=1)
    response = act_on_all_matching(operator, "reschedule_jobs", "", run_at=at.strftime("%Y-%m-%d %H:%M:%S"))
    assert "3 job(s) rescheduled (1 batch(es))." in [str(m) for m in response.context["messages"]]
    assert {abs(job.run_at - at) < timedelta(seconds=1) for job in Job.objects.filter(pk__in=[j.pk for j in later])} == {True}
    assert LogEntry.objects.filter(action_flag=CHANGE).count() == 2
