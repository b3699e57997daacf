"""``manage.py headgate_hold add|list|release`` (run as a subprocess against the test database)."""

import pytest

from django_headgate.models import LegalHold, LegalHoldJob

pytestmark = pytest.mark.django_db(transaction=True)

JOB = "00000000-0000-4000-8000-000000000001"


def test_add_list_and_release(run_manage):
    added = run_manage("headgate_hold", "add", "--tag", "subject:42", "--reason", "case 17", "--by", "alice")
    assert added.returncode == 0, added.stderr
    hold_id = LegalHold.objects.get().pk
    assert added.stdout.strip() == f"hold {hold_id} placed"
    by_ids = run_manage("headgate_hold", "add", "--job-id", JOB, "--reason", "audit")
    assert by_ids.returncode == 0, by_ids.stderr
    assert [str(job_id) for job_id in LegalHoldJob.objects.values_list("job_id", flat=True)] == [JOB]
    listed = run_manage("headgate_hold", "list")
    assert "tag=subject:42" in listed.stdout and "jobs=1" in listed.stdout
    released = run_manage("headgate_hold", "release", str(hold_id), "--by", "bob")
    assert released.returncode == 0, released.stderr
    assert run_manage("headgate_hold", "list").stdout.count("\n") == 1
    assert "released" in run_manage("headgate_hold", "list", "--all").stdout
    assert LegalHold.objects.get(pk=hold_id).released_by == "bob"


def test_bad_input_exits_1_and_writes_nothing(run_manage):
    refused = run_manage("headgate_hold", "add", "--tag", "x", "--reason", " ")
    assert (refused.returncode, "reason" in refused.stderr) == (1, True)
    unknown = run_manage("headgate_hold", "release", "999")
    assert (unknown.returncode, "No legal hold" in unknown.stderr) == (1, True)
    assert not LegalHold.objects.exists()
