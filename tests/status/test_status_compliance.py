"""headgate_status reports legal holds in force, held archive rows and unfinished erasures."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

import django_headgate as headgate
from django_headgate.models import Erasure

pytestmark = pytest.mark.django_db(transaction=True)


def status(*args):
    out = StringIO()
    call_command("headgate_status", *args, stdout=out)
    return out.getvalue()


def test_holds_and_erasures_are_reported(store):
    assert json.loads(status("--json"))["compliance"] == {
        "active_holds": 0, "held_archive_rows": 0, "held_archive_rows_exact": True, "unfinished_erasures": []}
    headgate.hold(tag="subject:1", reason="r")
    released = headgate.hold(tag="subject:2", reason="r")
    headgate.release_hold(released)
    killed = Erasure.objects.create(tag="subject:3", reason="r", requested_by="dpo")
    report = json.loads(status("--json"))["compliance"]
    assert (report["active_holds"], report["unfinished_erasures"]) == (1, [killed.pk])
    text = status()
    assert "1 legal hold(s) in force" in text and f"Erasure {killed.pk} did not finish" in text
