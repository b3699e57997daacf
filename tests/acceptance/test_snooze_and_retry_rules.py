"""Worker processes apply Snooze and the tasks' retry rules: a snoozed job runs again without
spending its attempt, the snooze bound holds, retry_on / no_retry_on decide retried or dead, and
a task's back-off sets run_at by the store clock."""

from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.store import get_store
from tests.acceptance.helpers import finish
from tests.testapp.models import SideEffect

pytestmark = pytest.mark.acceptance


def run_worker(spawn, *args):
    returncode, stdout, stderr = finish(spawn("headgate_worker", "--concurrency", "1", *args), timeout=180)
    assert returncode == 0, stderr
    return stdout


def test_snooze_1_with_one_attempt_runs_twice_and_succeeds(spawn):
    job = headgate.enqueue("tests.testapp.retry_tasks.snooze_then_succeed", args=("once",), kwargs={"seconds": 1})
    assert job.max_attempts == 1
    stdout = run_worker(spawn, "--max-jobs", "2")  # the first run, then the run after the snooze
    assert "1 succeeded, 0 retried, 0 dead, 0 rejected as stale, 1 snoozed." in stdout
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.result, row.attempts, row.snoozes, row.errors) == ("succeeded", "once", 1, 1, [])
    assert sorted(SideEffect.objects.filter(job_id=str(job.id)).values_list("token", "attempt")) == [
        ("once:0", 1), ("once:1", 1)]
    # Snoozed for 1 s by the store clock: the second run started once run_at had come.
    assert row.run_at >= row.created_at + timedelta(seconds=1)
    assert row.started_at >= row.run_at


def test_the_snooze_bound_is_enforced(spawn, monkeypatch):
    monkeypatch.setenv("HG_TEST_MAX_SNOOZES", "2")
    job = headgate.enqueue("tests.testapp.retry_tasks.snooze_for_ever", args=("ever",))
    # Two snoozes, then attempt 1 fails (SnoozeLimitExceeded), is retried, and attempt 2 fails.
    stdout = run_worker(spawn, "--max-jobs", "4")
    assert "0 succeeded, 1 retried, 1 dead, 0 rejected as stale, 2 snoozed." in stdout
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, row.snoozes) == ("dead", 2, 2)
    assert [e["type"] for e in row.errors] == ["SnoozeLimitExceeded", "SnoozeLimitExceeded"]
    assert SideEffect.objects.filter(job_id=str(job.id)).count() == 4


def test_retry_on_and_no_retry_on_decide_retried_or_dead(spawn):
    cases = {  # (task, exception kind): attempts it takes
        ("fail_retry_on", "connection"): 3,  # in retry_on: retried up to max_attempts=3
        ("fail_retry_on", "value"): 1,  # not in retry_on: dead at once
        ("fail_no_retry_on", "os"): 3,  # OSError: retried
        ("fail_no_retry_on", "permission"): 1,  # an OSError in no_retry_on: dead at once
    }
    jobs = {case: headgate.enqueue(f"tests.testapp.retry_tasks.{case[0]}", args=(case[1],)) for case in cases}
    run_worker(spawn, "--max-jobs", str(sum(cases.values())))
    for case, attempts in cases.items():
        row = Job.objects.get(pk=jobs[case].id)
        assert (case, row.state, row.attempts, len(row.errors)) == (case, "dead", attempts, attempts)


def test_the_task_backoff_sets_run_at_in_the_store_clock_window(spawn):
    fixed = headgate.enqueue("tests.testapp.retry_tasks.fail_with_slow_backoff")  # 30 s, no jitter
    jittered = headgate.enqueue("tests.testapp.retry_tasks.fail_with_jittered_backoff")  # 20 s +/- 50 %
    store = get_store()
    before = store.now()
    run_worker(spawn, "--burst")
    after = store.now()
    fixed_row, jittered_row = Job.objects.get(pk=fixed.id), Job.objects.get(pk=jittered.id)
    assert (fixed_row.state, fixed_row.attempts, jittered_row.state, jittered_row.attempts) == (
        "available", 1, "available", 1)
    slack = timedelta(milliseconds=2)
    assert before + timedelta(seconds=30) - slack <= fixed_row.run_at <= after + timedelta(seconds=30) + slack
    assert before + timedelta(seconds=10) - slack <= jittered_row.run_at <= after + timedelta(seconds=30) + slack
