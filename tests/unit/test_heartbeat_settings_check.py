"""`manage.py check` reports every invalid heartbeat setting in one run, each naming the field
and its allowed range (issue 4 acceptance)."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from django_headgate.conf import validate_settings

RETENTION = "HEADGATE['HEARTBEAT']['RETENTION']"
BATCH = "HEADGATE['HEARTBEAT']['PRUNE_BATCH_SIZE']"
CADENCE = "HEADGATE['HEARTBEAT']['PRUNE_INTERVAL']"

# Retention 1 h, batch 0, cadence 31 days, and a retention not above the stale bound (1 h).
BROKEN = {"HEARTBEAT": {
    "RETENTION": timedelta(hours=1), "STALE_AFTER": timedelta(hours=1),
    "PRUNE_BATCH_SIZE": 0, "PRUNE_INTERVAL": timedelta(days=31),
}}


def messages_for(raw):
    _, errors = validate_settings(raw)
    return [message for _, message in errors]


def test_all_heartbeat_errors_are_reported_together():
    messages = messages_for(BROKEN)
    assert len(messages) == 4
    retention_range, batch, cadence, stale_rule = messages
    assert retention_range.startswith(RETENTION) and "from 86400 to 315360000 seconds (1 d to 3650 d)" in retention_range
    assert batch.startswith(BATCH) and "an integer from 1 to 5000 (got 0)" in batch
    assert cadence.startswith(CADENCE) and "from 3600 to 2592000 seconds (1 h to 30 d)" in cadence
    assert stale_rule == (f"{RETENTION} (3600 s) must exceed HEADGATE['HEARTBEAT']['STALE_AFTER'] (3600 s).")


def test_batch_above_the_range_is_reported():
    (message,) = messages_for({"HEARTBEAT": {"PRUNE_BATCH_SIZE": 6000}})
    assert message == f"{BATCH} must be an integer from 1 to 5000 (got 6000)."


def test_the_bounds_themselves_are_valid():
    assert messages_for({"HEARTBEAT": {
        "RETENTION": timedelta(days=3650), "PRUNE_BATCH_SIZE": 5000, "PRUNE_INTERVAL": timedelta(hours=1),
    }}) == []
    assert messages_for({"HEARTBEAT": {"RETENTION": timedelta(hours=24), "PRUNE_BATCH_SIZE": 1,
                                       "PRUNE_INTERVAL": timedelta(days=30)}}) == []


@pytest.mark.parametrize("heartbeat, expected", [
    (BROKEN["HEARTBEAT"], [RETENTION, BATCH, CADENCE, "must exceed"]),
    ({"PRUNE_BATCH_SIZE": 6000}, [BATCH, "(got 6000)"]),
])
def test_manage_py_check_fails_listing_every_error(settings, heartbeat, expected):
    settings.HEADGATE = {"HEARTBEAT": heartbeat}
    with pytest.raises(SystemCheckError) as raised:
        call_command("check", tags=["headgate"])  # the model checks would need a database
    report = str(raised.value)
    for text in expected:
        assert text in report
    assert report.count("headgate.E001") == (4 if len(expected) == 4 else 1)
