"""A task failing with megabytes of error text costs the worker no more than a short one: the
text is cut to its stored length before it is scrubbed, so no job thread holds the interpreter
long enough for another job's lease to lapse (docs/worker.md, "Failure isolation")."""

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.store.entries import MESSAGE_MAX_CHARS, TRACEBACK_MAX_CHARS
from tests.acceptance.helpers import finish
from tests.support.waiting import wait_for

pytestmark = pytest.mark.acceptance

FOUR_MIB = 4 * 1024 * 1024
LEASE = "5"  # the shortest lease the worker accepts


def test_4_mib_error_texts_never_cost_a_neighbour_its_lease(spawn, store):
    # Claimed first, so it runs beside the failures; it outlives its lease unless renewed.
    neighbour = headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(6, "ok"), max_attempts=1)
    failing = [headgate.enqueue("tests.testapp.outcome_tasks.raise_database_text", args=(FOUR_MIB,),
                                max_attempts=1) for _ in range(2)]
    failing.append(headgate.enqueue("tests.testapp.outcome_tasks.raise_chained_database_text",
                                    args=(FOUR_MIB, 8), max_attempts=1))
    worker = spawn("headgate_worker", "--burst", "--concurrency", "2", "--lease-seconds", LEASE)
    rescued = []

    def rescue_until(condition):
        def step():
            rescued.append(store.rescue_expired(100))  # what a maintainer does meanwhile
            return condition()
        return step

    wait_for(rescue_until(lambda: Job.objects.get(pk=neighbour.id).state in ("succeeded", "dead")), timeout=60, interval=0.2,
             message="the neighbour to finish")
    row = Job.objects.get(pk=neighbour.id)
    assert (row.state, row.result, row.errors) == ("succeeded", "ok", []), row.errors
    wait_for(rescue_until(lambda: worker.poll() is not None), timeout=60, interval=0.2, message="the worker to exit")
    returncode, stdout, stderr = finish(worker)
    assert sum(rescued) == 0 and returncode == 0, stderr
    for job in failing:
        row = Job.objects.get(pk=job.id)
        [entry] = row.errors
        assert row.state == "dead" and entry["type"] == "ValueError"
        assert entry["message"].startswith("could not parse Duplicate entry '[value removed]") or \
            entry["message"] == "Duplicate entry '[value removed]"
        assert len(entry["message"]) <= MESSAGE_MAX_CHARS and len(entry["traceback"]) <= TRACEBACK_MAX_CHARS
