"""pause_queue, resume_queue and set_queue_limits (flow/queue_controls.py, DESIGN §15): stored
in headgate_queue_control; bad input raises InvalidQueueControl before any write."""

import pytest

import django_headgate as headgate
from django_headgate.exceptions import InvalidQueueControl
from django_headgate.flow.queue_controls import queue_controls
from django_headgate.models import QueueControl


@pytest.mark.django_db
def test_pause_resume_and_limits():
    headgate.pause_queue("emails")
    assert QueueControl.objects.get(queue="emails").paused
    headgate.set_queue_limits("billing", concurrency=3, rate_limit="20/s")
    assert set(queue_controls()) == {"emails", "billing"}
    headgate.resume_queue("emails")
    headgate.set_queue_limits("billing", concurrency=None, rate_limit=None)  # None clears
    assert queue_controls() == {}
    row = QueueControl.objects.get(queue="billing")
    assert (row.concurrency, row.rate_limit) == (None, None)


@pytest.mark.django_db
@pytest.mark.parametrize("call", [
    lambda: headgate.set_queue_limits("q", concurrency=0),
    lambda: headgate.set_queue_limits("q", concurrency=True),
    lambda: headgate.set_queue_limits("q", rate_limit="abc/s"),
    lambda: headgate.set_queue_limits("q", rate_limit="10/d"),
    lambda: headgate.set_queue_limits("q", rate_limit="0/s"),
    lambda: headgate.set_queue_limits("q", concurrency=2, rate_limit=10),
    lambda: headgate.pause_queue(""),
    lambda: headgate.pause_queue("bad queue name!"),
])
def test_bad_controls_raise_before_any_write(call):
    with pytest.raises(InvalidQueueControl):
        call()
    assert QueueControl.objects.count() == 0
