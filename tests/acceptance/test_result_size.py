"""A job never stores more than HEADGATE["MAX_RESULT_BYTES"] of result or progress, nor more than
OUTPUT_MAX_CHARS of output, and a job over a limit never holds the others: a 50 MiB result fails
its own attempt with ResultTooLarge while the job acknowledged beside it succeeds (on MariaDB the
statement carrying it used to exceed max_allowed_packet, drop the connection every second and
leave the whole batch unacknowledged)."""

import pytest

import django_headgate as headgate
from django_headgate.conf import FIELDS_BY_PATH
from django_headgate.models import Job

pytestmark = pytest.mark.acceptance

MIB = 1024 * 1024
MAX_RESULT_BYTES = FIELDS_BY_PATH[("MAX_RESULT_BYTES",)].default
OUTPUT_MAX_CHARS = FIELDS_BY_PATH[("OUTPUT_MAX_CHARS",)].default


def test_a_50_mib_result_fails_alone_and_its_batch_is_acknowledged(run_manage, tmp_path):
    # Both wait at a barrier, so they finish together and their outcomes meet in one round.
    big = headgate.enqueue("tests.testapp.outcome_tasks.return_text", args=(50 * MIB, str(tmp_path), 2))
    small = headgate.enqueue("tests.testapp.outcome_tasks.return_text", args=(10, str(tmp_path), 2))
    progress = headgate.enqueue("tests.testapp.outcome_tasks.set_progress_text", args=(2 * MIB,), max_attempts=1)
    output = headgate.enqueue("tests.testapp.outcome_tasks.append_output_text", args=(10 * MIB, 3))

    done = run_manage("headgate_worker", "--burst", "--concurrency", "2", timeout=90)

    assert done.returncode == 0, done.stderr
    row = Job.objects.get(pk=small.id)
    assert (row.state, row.result) == ("succeeded", "r" * 10)
    row = Job.objects.get(pk=big.id)
    [entry] = row.errors
    assert (row.state, row.attempts, row.result) == ("dead", 1, None)  # not retried: it would return the same
    assert (entry["type"], entry["type_path"]) == ("ResultTooLarge", "django_headgate.exceptions.ResultTooLarge")
    assert entry["message"] == (f"The task's result encodes to {50 * MIB + 2:,} bytes of JSON; "
                                f"HEADGATE['MAX_RESULT_BYTES'] allows {MAX_RESULT_BYTES:,}.")
    row = Job.objects.get(pk=progress.id)
    assert (row.state, row.progress, row.errors[0]["type"]) == ("dead", None, "ResultTooLarge")
    row = Job.objects.get(pk=output.id)
    assert (row.state, row.output) == ("succeeded", "o" * OUTPUT_MAX_CHARS)
