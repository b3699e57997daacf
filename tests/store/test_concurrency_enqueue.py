"""Enqueue with concurrency options (DESIGN §15): the key and limit are stored on the row (from
the task's options or per call, also through enqueue_many); bad options raise before any write."""

import pytest

import django_headgate as headgate
from django_headgate.exceptions import HeadgateError
from django_headgate.models import FlowKey, Job

LIMITED = "tests.testapp.flow_tasks.one_at_a_time_per_account"
PLAIN = "tests.testapp.flow_tasks.timed_run"


@pytest.mark.django_db(transaction=True)
def test_the_tasks_options_are_stored_on_the_row():
    job = headgate.enqueue(LIMITED, kwargs={"account": 42, "seconds": 0})
    row = Job.objects.get(pk=job.id)
    assert (row.concurrency_key, row.concurrency_limit, row.state) == ("account:42", 1, "available")
    assert (job.concurrency_key, job.concurrency_limit) == ("account:42", 1)
    assert FlowKey.objects.filter(key="account:42").exists()


@pytest.mark.django_db(transaction=True)
def test_per_call_options_override_and_a_limit_alone_keys_the_task():
    keyed = headgate.enqueue(LIMITED, kwargs={"account": 1, "seconds": 0}, concurrency_key="shared",
                             concurrency_limit=3)
    whole_task = headgate.enqueue(PLAIN, args=("x", 0), concurrency_limit=2)
    plain = headgate.enqueue(PLAIN, args=("x", 0))
    rows = {row.id: row for row in Job.objects.all()}
    assert (rows[keyed.id].concurrency_key, rows[keyed.id].concurrency_limit) == ("shared", 3)
    assert (rows[whole_task.id].concurrency_key, rows[whole_task.id].concurrency_limit) == (PLAIN, 2)
    assert (rows[plain.id].concurrency_key, rows[plain.id].concurrency_limit) == (None, None)


@pytest.mark.django_db(transaction=True)
def test_enqueue_many_stores_keys():
    ids = headgate.enqueue_many([
        headgate.JobSpec(LIMITED, kwargs={"account": n, "seconds": 0}) for n in range(3)
    ] + [headgate.JobSpec(PLAIN, args=("x", 0))])
    keys = dict(Job.objects.filter(pk__in=ids).values_list("id", "concurrency_key"))
    assert [keys[i] for i in ids] == ["account:0", "account:1", "account:2", None]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("call", [
    lambda: headgate.enqueue(PLAIN, args=("x", 0), concurrency_limit=0),
    lambda: headgate.enqueue(PLAIN, args=("x", 0), concurrency_key="k"),  # a key needs a limit
    lambda: headgate.enqueue(PLAIN, args=("x", 0), concurrency_key=7, concurrency_limit=1),
    lambda: headgate.enqueue(LIMITED, kwargs={"seconds": 0}),  # the template's kwarg is missing
    lambda: headgate.enqueue_many([headgate.JobSpec(PLAIN, args=("x", 0)),
                                   headgate.JobSpec(LIMITED, args=(1, 0))]),
])
def test_bad_options_raise_before_any_write(call):
    with pytest.raises(HeadgateError):
        call()
    assert Job.objects.count() == 0 and FlowKey.objects.count() == 0
