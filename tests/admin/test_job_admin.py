"""Job inspection: filters, search, state counts, detail, and retry/cancel through the API."""

import pytest
from django.urls import reverse

from django_headgate.models import Job, JobState

from .rows import SECRET_ARG, SECRET_KWARG, SECRET_RESULT, make_jobs

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:headgate_job_changelist"


def change_url(job):
    return reverse("admin:headgate_job_change", args=[job.pk])


def results(client, **params):
    response = client.get(reverse(CHANGELIST), params)
    assert response.status_code == 200
    return {job.pk for job in response.context["cl"].result_list}


def test_filters_by_queue_state_task_and_retention_class(auditor):
    billing = make_jobs(2, queue="billing")
    dead = make_jobs(1, queue="emails", state=JobState.DEAD)
    assert results(auditor, queue="billing") == {job.pk for job in billing}
    assert results(auditor, state="dead") == {job.pk for job in dead}
    assert len(results(auditor, task="tests.testapp.tasks.noop")) == 3
    assert len(results(auditor, retention_class="standard_30d")) == 3
    assert results(auditor, retention_class="forever") == set()


def test_search_by_id_unique_key_and_tag(auditor):
    tagged = make_jobs(1, tags=("invoice-42",))[0]
    keyed = make_jobs(1, unique_key="order", tags=())[0]
    other = make_jobs(1, tags=("blue",))[0]
    assert results(auditor, q=str(other.pk)) == {other.pk}
    assert results(auditor, q=keyed.unique_key) == {keyed.pk}
    assert results(auditor, q="invoice-42") == {tagged.pk}
    assert results(auditor, q="invoice") == set()  # a tag matches whole, not in part
    assert results(auditor, q=SECRET_ARG[:9]) == set()  # payloads are never searched


def counts_of(response):
    return {row.queue: ({state: n for state, n, _ in row.cells}, row.total)
            for row in response.context["headgate_queue_counts"]}


def test_state_counts_per_queue_above_the_list(auditor):
    make_jobs(2, queue="billing")
    make_jobs(3, queue="billing", state=JobState.DEAD)
    make_jobs(1, queue="emails", state=JobState.SUCCEEDED)
    response = auditor.get(reverse(CHANGELIST))
    counts = counts_of(response)
    assert counts["billing"] == ({"available": 2, "running": 0, "held_back": 0, "succeeded": 0, "dead": 3,
                                  "cancelled": 0, "waiting": 0}, "5")
    assert counts["emails"][0]["succeeded"] == 1
    assert "Jobs per queue and state" in response.content.decode()


def test_state_counts_stop_at_the_cap(auditor, monkeypatch):
    from django_headgate.admin import summaries

    monkeypatch.setattr(summaries, "COUNT_CAP", 3)
    make_jobs(5, queue="billing")
    response = auditor.get(reverse(CHANGELIST))
    row = response.context["headgate_queue_counts"][0]
    assert row.cells[0][2] == "3+" and row.total == "3+"


def test_list_is_newest_first_and_pages_without_counting(auditor):
    jobs = make_jobs(60)
    first = auditor.get(reverse(CHANGELIST))
    shown = [job.pk for job in first.context["cl"].result_list]
    assert shown == sorted((job.pk for job in jobs), reverse=True)[:50]
    assert first.context["cl"].older_page_url
    second = auditor.get(reverse(CHANGELIST), {"p": 2})
    assert len(second.context["cl"].result_list) == 10
    assert "Select all" not in first.content.decode()


def test_detail_shows_errors_progress_and_output(auditor, payload_viewer):
    job = make_jobs(1, state=JobState.DEAD)[0]
    body = auditor.get(change_url(job)).content.decode()
    assert "ValueError" in body and "boom" not in body and "line two" not in body
    assert "&quot;total&quot;: 10" in body or '"total": 10' in body
    body = payload_viewer.get(change_url(job)).content.decode()
    assert "ValueError" in body and "boom" in body and "line two" in body


def test_payload_only_with_view_job_payload(auditor, payload_viewer):
    job = make_jobs(1, state=JobState.SUCCEEDED)[0]
    withheld = auditor.get(change_url(job)).content.decode()
    for secret in (SECRET_ARG, SECRET_KWARG, SECRET_RESULT):
        assert secret not in withheld
    assert "withheld" in withheld
    shown = payload_viewer.get(change_url(job)).content.decode()
    for secret in (SECRET_ARG, SECRET_KWARG, SECRET_RESULT):
        assert secret in shown


def test_jobs_are_never_added_changed_or_deleted_here(operator):
    job = make_jobs(1)[0]
    assert operator.get(reverse("admin:headgate_job_add")).status_code == 403
    assert operator.post(change_url(job), {"queue": "other"}).status_code == 403
    delete = reverse("admin:headgate_job_delete", args=[job.pk])
    assert operator.post(delete, {"post": "yes"}).status_code == 403
    assert Job.objects.get(pk=job.pk).queue == "default"


def post_action(client, action, jobs, *, confirm=True, **extra):
    """Post a list action on ``jobs``; ``confirm``: as the confirmation page's button does."""
    data = {"action": action, "_selected_action": [j.pk for j in jobs], **extra}
    if confirm:
        data.update({"headgate_confirm": "yes", "index": "0"})
    return client.post(reverse(CHANGELIST), data, follow=True)


def test_retry_action_changes_dead_jobs_and_never_a_running_one(operator):
    dead = make_jobs(2, state=JobState.DEAD)
    running = make_jobs(1, state=JobState.RUNNING)
    page = post_action(operator, "retry_jobs", dead + running, confirm=False).content.decode()
    assert "Retry <strong>2</strong> jobs" in page and "the 3 ticked" in page  # confirmation first
    assert Job.objects.filter(state="dead").count() == 2
    response = post_action(operator, "retry_jobs", dead + running)
    messages = [str(m) for m in response.context["messages"]]
    assert "2 job(s) retried (1 batch(es))." in messages
    assert set(Job.objects.filter(pk__in=[j.pk for j in dead]).values_list("state", flat=True)) == {"available"}
    assert Job.objects.get(pk=running[0].pk).state == "running"


def test_cancel_action_and_detail_button(operator):
    available = make_jobs(2)
    response = post_action(operator, "cancel_jobs", available[:1])
    assert "1 job(s) cancelled, 0 running job(s) asked to abort (1 batch(es))." in [
        str(m) for m in response.context["messages"]]
    assert Job.objects.get(pk=available[0].pk).state == "cancelled"

    page = operator.get(change_url(available[1])).content.decode()
    cancel_url = reverse("admin:headgate_job_cancel", args=[available[1].pk])
    assert cancel_url in page
    assert operator.get(cancel_url).status_code == 405  # GET changes nothing
    assert operator.post(cancel_url).status_code == 302
    assert Job.objects.get(pk=available[1].pk).state == "cancelled"
    retry_url = reverse("admin:headgate_job_retry", args=[available[1].pk])
    assert retry_url in operator.get(change_url(available[1])).content.decode()


def test_actions_need_change_job(auditor):
    dead = make_jobs(1, state=JobState.DEAD)
    page = auditor.get(reverse(CHANGELIST)).content.decode()
    assert "retry_jobs" not in page
    post_action(auditor, "retry_jobs", dead)
    assert Job.objects.get(pk=dead[0].pk).state == "dead"
    assert auditor.post(reverse("admin:headgate_job_retry", args=[dead[0].pk])).status_code == 403
    assert Job.objects.get(pk=dead[0].pk).state == "dead"


def test_a_list_action_leaves_one_log_entry_and_a_button_one_per_job(operator):
    from django.contrib.admin.models import CHANGE, LogEntry

    dead = make_jobs(2, state=JobState.DEAD)
    post_action(operator, "retry_jobs", dead)
    available = make_jobs(1)
    operator.post(reverse("admin:headgate_job_cancel", args=[available[0].pk]))
    entries = list(LogEntry.objects.filter(action_flag=CHANGE).order_by("pk"))
    assert [entry.object_id for entry in entries] == ["", str(available[0].pk)]
    assert entries[0].get_change_message() == (
        "Admin retry of 2 ticked jobs; filter: none; 2 changed in 1 batches.")
    assert entries[1].get_change_message() == "Admin cancel: cancelled."
    assert {entry.user.username for entry in entries} == {"operator"}
