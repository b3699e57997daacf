"""Text read from rows never drives a terminal nor forges a line: headgate_status prints queue
names, worker ids and host names escaped (ESC, newline, U+2028, U+2029), in text, --check and
--json alike."""

import json
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from django_headgate.models import WorkerHeartbeat
from tests.factories import JobFactory

pytestmark = pytest.mark.django_db(transaction=True)

FORGED = ("mail\x1b[2J\x1b[31m", "host\nWARNING: all good", "w\u2028x", "q\u2029y")
RAW = ("\x1b", "\u2028", "\u2029")


def rows_with_forged_text():
    JobFactory(queue=FORGED[0])
    JobFactory(queue=FORGED[3])
    now = timezone.now()
    WorkerHeartbeat.objects.create(worker_id=FORGED[2], instance_id=uuid.uuid4(), hostname=FORGED[1],
                                   pid=1, queues=[FORGED[0]], started_at=now, last_heartbeat_at=now)


def run(*args):
    out = StringIO()
    try:
        call_command("headgate_status", *args, stdout=out)
    except CommandError:
        pass  # --check exits 1 on its warnings
    return out.getvalue()


@pytest.mark.parametrize("args", [(), ("--check",)])
def test_text_from_rows_is_printed_escaped(args):
    rows_with_forged_text()
    text = run(*args)
    for raw in RAW:
        assert raw not in text
    assert not any(line.startswith("WARNING: all good") for line in text.splitlines())
    if not args:
        assert "mail\\x1b[2J\\x1b[31m" in text and "host\\nWARNING: all good" in text
        assert "w\\u2028x" in text


def test_json_report_escapes_them_too():
    rows_with_forged_text()
    text = run("--json")
    for raw in RAW:
        assert raw not in text
    report = json.loads(text)
    assert FORGED[0] in report["jobs"]["by_queue"]  # the JSON value itself is exact
