"""``manage.py headgate_queues`` (DESIGN §15): the list with depth, running, held-back, paused
and limits; pause, resume and limit verbs; bad input is a CommandError and changes nothing."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from django_headgate.models import QueueControl
from tests.factories import JobFactory


def run(*args):
    out = StringIO()
    call_command("headgate_queues", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_list_verbs_and_json():
    JobFactory(queue="emails"), JobFactory(queue="emails")
    JobFactory(queue="emails", state="held_back", concurrency_key="k", concurrency_limit=1)
    JobFactory(queue="billing", state="running", lease_owner="w")
    assert "pause done" in run("pause", "emails")
    run("limit", "billing", "--concurrency", "3", "--rate", "20/s")
    text = run()
    lines = {line.split()[0]: line for line in text.splitlines()[1:]}
    assert lines["emails"].split()[1:5] == ["2", "0", "1", "yes"]
    assert lines["billing"].split()[1:5] == ["0", "1", "0", "no"] and "concurrency 3, rate 20/s" in lines["billing"]
    rows = {row["queue"]: row for row in json.loads(run("--json"))}
    assert rows["emails"]["held_back"] == 1 and rows["emails"]["paused"] is True
    run("resume", "emails")
    run("limit", "billing")  # limits left out are cleared
    control = QueueControl.objects.get(queue="billing")
    assert (control.concurrency, control.rate_limit) == (None, None)
    assert not QueueControl.objects.get(queue="emails").paused


@pytest.mark.django_db
@pytest.mark.parametrize("args", [("limit", "q", "--concurrency", "0"), ("limit", "q", "--rate", "abc/s"),
                                  ("pause", "bad name!")])
def test_bad_input_is_refused(args):
    with pytest.raises(CommandError):
        run(*args)
    assert QueueControl.objects.count() == 0
