"""One payload rule on every vendor: each bad input raises its HeadgateError, naming the field,
before anything is written; what the rule accepts is stored and read back unchanged."""

from datetime import datetime, timedelta, timezone

import pytest

import django_headgate as headgate
from django_headgate.exceptions import (
    HeadgateError,
    InvalidPolicy,
    InvalidQueueName,
    InvalidRunAt,
    InvalidTags,
    InvalidText,
    PayloadTooDeep,
    PayloadTooLarge,
)
from django_headgate.models import ArchivePolicy, Job, QueueStoragePolicy, RetentionClass
from django_headgate.values.payload import MAX_JSON_DEPTH

TASK = "tests.testapp.tasks.noop"
NUL, SURROGATE = "a\x00b", "a\ud800b"


def nested(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


BAD_INPUTS = [
    (InvalidText, "task", dict(task="tests.testapp.tasks.no\x00op")),
    (InvalidQueueName, "queue", dict(queue="default\x00")),
    (InvalidText, "unique_key", dict(unique_key=NUL)),
    (InvalidText, "unique_key", dict(unique_key=SURROGATE)),
    (InvalidText, "tags", dict(tags=[NUL])),
    (InvalidText, "tags", dict(tags=[SURROGATE])),
    (InvalidText, "args", dict(args=[NUL])),
    (InvalidText, "args", dict(args=[{"deep": [SURROGATE]}])),
    (InvalidText, "kwargs", dict(kwargs={"x": NUL})),
    (InvalidText, "kwargs", dict(kwargs={NUL: 1})),
    (InvalidText, "kwargs", dict(kwargs={"x": {SURROGATE: 1}})),
    (PayloadTooDeep, "args", dict(args=[nested(10_000)])),
    (PayloadTooDeep, "args", dict(args=[nested(MAX_JSON_DEPTH)])),
    (PayloadTooDeep, "kwargs", dict(kwargs={"x": nested(MAX_JSON_DEPTH)})),
    (PayloadTooLarge, "args", dict(args=["x" * (1024 * 1024 + 1)])),
    (InvalidRunAt, "delay", dict(delay=float("nan"))),
    (InvalidRunAt, "delay", dict(delay=float("inf"))),
    (InvalidRunAt, "delay", dict(delay=-1)),
    (InvalidRunAt, "delay", dict(delay=1e300)),
    (InvalidRunAt, "delay", dict(delay=10**12)),
    (InvalidRunAt, "delay", dict(delay=timedelta.max)),
    (InvalidRunAt, "delay", dict(delay=timedelta(days=36501))),
    (InvalidRunAt, "run_at", dict(run_at=datetime(9999, 12, 31, 23, tzinfo=timezone.utc))),
    (InvalidRunAt, "run_at", dict(run_at=datetime.max.replace(tzinfo=timezone.utc))),
    (InvalidRunAt, "run_at", dict(run_at=datetime(9999, 12, 31, 23, tzinfo=timezone(-timedelta(hours=5))))),
    (InvalidRunAt, "run_at", dict(run_at=datetime(1, 1, 1, tzinfo=timezone.utc))),
    (InvalidTags, "tags", dict(tags="billing")),
    (InvalidTags, "tags", dict(tags=5)),
    (InvalidTags, "tags", dict(tags={"billing"})),
    (InvalidTags, "tags", dict(tags=[5])),
]


def _ids(value):
    if isinstance(value, dict):  # repr() of 10,000 nested lists would recurse too deep
        return "+".join(f"{key}:{type(item).__name__}" for key, item in value.items())
    return getattr(value, "__name__", None) or str(value)[:30]


@pytest.mark.parametrize("error, field, overrides", BAD_INPUTS, ids=_ids)
def test_bad_input_is_refused_naming_the_field(store, error, field, overrides):
    arguments = {"task": TASK, **overrides}
    with pytest.raises(error) as raised:
        headgate.enqueue(arguments.pop("task"), **arguments)
    assert isinstance(raised.value, HeadgateError)
    assert getattr(raised.value, "field", None) == field or field == "queue"
    assert Job.objects.count() == 0


@pytest.mark.parametrize("error, field, overrides", [b for b in BAD_INPUTS if "unique_key" not in b[2]], ids=_ids)
def test_bad_spec_in_a_batch_is_refused(store, error, field, overrides):
    arguments = {"task": TASK, **overrides}
    specs = [headgate.JobSpec(TASK), headgate.JobSpec(**arguments), headgate.JobSpec(TASK)]
    with pytest.raises(error):
        headgate.enqueue_many(specs)
    assert Job.objects.count() == 0


GOOD_TEXT = ["émoji 😀", "한국어", "\ud7ff", "C:\\udir\\u0000", "tab\tnewline\n", "\u2028"]


def test_what_the_rule_accepts_round_trips(store):
    job = headgate.enqueue(TASK, args=[GOOD_TEXT, nested(MAX_JSON_DEPTH - 2)], kwargs={"😀": "한"},
                           unique_key="ключ 😀", tags=["ярлык", "😀"])
    row = Job.objects.get(pk=job.id)
    assert row.args == [GOOD_TEXT, nested(MAX_JSON_DEPTH - 2)]
    assert (row.kwargs, row.unique_key, row.tags) == ({"😀": "한"}, "ключ 😀", ["ярлык", "😀"])


def test_the_bounds_themselves_are_stored_and_read_back(store):
    late = headgate.enqueue(TASK, run_at=datetime(9998, 12, 31, tzinfo=timezone.utc))
    far = headgate.enqueue(TASK, delay=timedelta(days=36500))
    big = headgate.enqueue(TASK, args=["x" * (1024 * 1024 - 10)])
    rows = Job.objects.in_bulk([late.id, far.id, big.id])
    assert rows[late.id].run_at.year == 9998
    assert rows[far.id].run_at.year >= 2126
    assert len(rows[big.id].args[0]) == 1024 * 1024 - 10
    assert list(Job.objects.order_by("-run_at").values_list("id", flat=True)[:1]) == [late.id]


def test_max_payload_bytes_setting(store, settings):
    settings.HEADGATE = {**settings.HEADGATE, "MAX_PAYLOAD_BYTES": 2048}
    with pytest.raises(PayloadTooLarge) as raised:
        headgate.enqueue(TASK, kwargs={"x": "y" * 2048})
    assert (raised.value.field, raised.value.limit) == ("kwargs", 2048)
    assert Job.objects.count() == 0


def test_enqueue_many_splits_a_large_batch_by_bytes(store):
    """40 x 900 kB: one statement would exceed MariaDB's 16 MiB packet (error 1153 / 2006)."""
    payload = "p" * 900_000
    ids = headgate.enqueue_many([headgate.JobSpec(TASK, args=[payload, n]) for n in range(40)])
    assert Job.objects.filter(pk__in=ids).count() == 40
    assert Job.objects.get(pk=ids[-1]).args == [payload, 39]


@pytest.mark.parametrize("duration", [float("nan"), float("inf"), -float("inf"), 1e300, timedelta.max])
def test_policy_durations_must_be_finite_and_bounded(store, duration):
    classes = RetentionClass.objects.count()
    with pytest.raises(InvalidPolicy) as raised:
        headgate.register_retention_class("audit_x", duration)
    assert raised.value.field == "duration"
    with pytest.raises(InvalidPolicy) as raised:
        headgate.set_queue_retention("emails", duration)
    assert raised.value.field == "retention"
    with pytest.raises(InvalidPolicy) as raised:
        headgate.set_archive_policy("emails", duration)
    assert raised.value.field == "archive_retention"
    assert RetentionClass.objects.count() == classes
    assert not QueueStoragePolicy.objects.exists() and not ArchivePolicy.objects.exists()
