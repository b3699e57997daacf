"""register_retention_class: the key grammar, positive durations, immutability; nothing written on error."""

from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.exceptions import InvalidPolicy
from django_headgate.models import RetentionClass

BAD_KEYS = [
    "", "Audit", "audit-1y", "1audit", "_audit", "audit 1y", "audité", "a" * 19,
    "standard_30d", "forever", "heartbeats", "q_emails_7d", "q_", None, 7,
]
BAD_DURATIONS = [
    timedelta(0), timedelta(seconds=-1), timedelta(days=-30), timedelta(milliseconds=1500),
    timedelta(days=36501), 0, -5, 0.5, True, "30d", None,
]


@pytest.fixture
def class_rows(db):
    return lambda: set(RetentionClass.objects.values_list("key", flat=True))


def test_register_then_again_with_the_same_duration(class_rows):
    entry = headgate.register_retention_class("audit_1y", timedelta(days=365))
    assert (entry.key, entry.duration) == ("audit_1y", timedelta(days=365))
    again = headgate.register_retention_class("audit_1y", 365 * 86400)  # seconds are accepted too
    assert again.key == "audit_1y" and RetentionClass.objects.filter(key="audit_1y").count() == 1


def test_eighteen_characters_is_the_limit(class_rows):
    headgate.register_retention_class("a" * 18, timedelta(days=1))
    assert "a" * 18 in class_rows()


def test_changing_a_registered_duration_names_both(class_rows):
    headgate.register_retention_class("audit_1y", timedelta(days=365))
    with pytest.raises(InvalidPolicy) as refused:
        headgate.register_retention_class("audit_1y", timedelta(days=400))
    assert refused.value.field == "duration"
    assert "365 days" in refused.value.message and "400 days" in refused.value.message
    assert RetentionClass.objects.get(key="audit_1y").duration == timedelta(days=365)


@pytest.mark.parametrize("key", BAD_KEYS)
def test_bad_key_is_refused_and_nothing_written(key, class_rows):
    before = class_rows()
    with pytest.raises(InvalidPolicy) as refused:
        headgate.register_retention_class(key, timedelta(days=7))
    assert refused.value.field == "key"
    assert class_rows() == before


@pytest.mark.parametrize("duration", BAD_DURATIONS)
def test_bad_duration_is_refused_and_nothing_written(duration, class_rows):
    before = class_rows()
    with pytest.raises(InvalidPolicy) as refused:
        headgate.register_retention_class("audit_x", duration)
    assert refused.value.field == "duration"
    assert class_rows() == before
