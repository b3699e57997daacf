"""``headgate_jobs``: list/show output (JSON that matches the API), the verbs with --dry-run and
--yes, payload only with --show-payload, and exit statuses that say what happened."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.operations.filters import job_filter
from django_headgate.operations.listing import matching_jobs
from django_headgate.operations.records import SUMMARY_KEYS
from tests.factories import JobFactory

pytestmark = pytest.mark.django_db


def run(*args):
    out = StringIO()
    call_command("headgate_jobs", *args, stdout=out)
    return out.getvalue()


def exit_status(*args):
    with pytest.raises(CommandError) as raised:
        run(*args)
    return raised.value.returncode


@pytest.fixture
def jobs():
    return {
        "dead": JobFactory(state="dead", attempts=3, tags=["import"], args=["secret-arg"]),
        "dead_billing": JobFactory(state="dead", attempts=3, queue="billing"),
        "waiting": JobFactory(run_at=timezone.now() + timedelta(hours=1), kwargs={"card": "4111"}),
        "running": JobFactory(state="running", attempts=1, fence=1, lease_owner="w"),
    }


def test_list_json_parses_and_matches_the_api(jobs):
    lines = run("list", "--state", "dead", "--json").splitlines()
    records = [json.loads(line) for line in lines]
    assert [record["id"] for record in records] == [
        str(job.id) for job in matching_jobs(job_filter(state="dead"), limit=100)]
    assert {record["id"] for record in records} == {str(jobs["dead"].id), str(jobs["dead_billing"].id)}
    assert all(tuple(record) == SUMMARY_KEYS for record in records)
    by_queue = [json.loads(line)["id"] for line in run("list", "--queue", "billing", "--json").splitlines()]
    assert by_queue == [str(jobs["dead_billing"].id)]
    assert "secret-arg" not in run("list", "--json") and "4111" not in run("list")


def test_list_text_and_limit(jobs):
    text = run("list", "--limit", "2")
    assert text.splitlines()[0].split() == ["id", "state", "queue", "task", "attempts", "run_at"]
    assert "2 job(s) (--limit 2 reached)" in text


def test_show_withholds_the_payload_unless_asked(jobs):
    shown = json.loads(run("show", "--id", str(jobs["dead"].id), "--json"))
    assert shown["id"] == str(jobs["dead"].id) and "args" not in shown and "secret-arg" not in json.dumps(shown)
    with_payload = json.loads(run("show", "--id", str(jobs["dead"].id), "--json", "--show-payload"))
    assert with_payload["args"] == ["secret-arg"]
    assert exit_status("show", "--id", "0192a3b4-0000-7000-8000-000000000000") == 3
    assert exit_status("show", "--queue", "default") == 2


def test_retry_needs_yes_without_a_terminal_and_dry_run_changes_nothing(jobs):
    assert exit_status("retry", "--state", "dead") == 4
    assert json.loads(run("retry", "--state", "dead", "--dry-run", "--json"))["count"] == 2
    assert Job.objects.filter(state="dead").count() == 2
    outcome = json.loads(run("retry", "--state", "dead", "--tag", "import", "--yes", "--json"))
    assert (outcome["action"], outcome["count"], outcome["dry_run"]) == ("retry", 1, False)
    assert Job.objects.get(pk=jobs["dead"].id).state == "available"
    assert Job.objects.get(pk=jobs["dead_billing"].id).state == "dead"


def test_cancel_run_now_reschedule_and_discard(jobs):
    assert "1 running job(s) asked to abort" in run("cancel", "--state", "running", "--yes")
    assert Job.objects.get(pk=jobs["running"].id).state == "running"
    run("run-now", "--queue", "default", "--yes")
    assert Job.objects.get(pk=jobs["waiting"].id).run_at <= timezone.now()
    at = (timezone.now() + timedelta(days=2)).isoformat()
    assert json.loads(run("reschedule", "--id", str(jobs["waiting"].id), "--at", at, "--yes", "--json"))["count"] == 1
    assert exit_status("reschedule", "--queue", "default", "--yes") == 2  # no --at
    assert json.loads(run("discard", "--queue", "default", "--yes", "--json"))["count"] == 1
    assert not Job.objects.filter(pk=jobs["waiting"].id).exists()


def test_exit_statuses_for_bad_input_and_nothing_matched(jobs):
    assert exit_status("retry", "--yes") == 2  # no filter: never every job by accident
    assert exit_status("retry", "--state", "available", "--yes") == 2
    assert exit_status("list", "--older-than", "soon") == 2
    assert exit_status("list", "--queue", "bad queue!") == 2
    assert exit_status("retry", "--queue", "nothing-here", "--yes") == 3
    assert run("list", "--older-than", "1d", "--json") == ""


def test_the_command_refuses_without_yes_when_run_without_a_terminal(run_manage):
    headgate.enqueue("tests.testapp.tasks.noop")
    refused = run_manage("headgate_jobs", "cancel", "--queue", "default")
    assert refused.returncode == 4 and "--yes" in refused.stderr
    done = run_manage("headgate_jobs", "cancel", "--queue", "default", "--yes")
    assert done.returncode == 0 and "cancel: 1 job(s)" in done.stdout
    assert run_manage("headgate_jobs", "cancel", "--queue", "default", "--yes").returncode == 3
