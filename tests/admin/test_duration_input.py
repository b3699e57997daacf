"""The policy forms' duration text: compact units, Django's formats, and nothing else."""

from datetime import timedelta

import pytest
from django import forms

from django_headgate.admin.forms import DurationInput, format_duration


@pytest.mark.parametrize("text, expected", [
    ("7d", timedelta(days=7)),
    ("12h", timedelta(hours=12)),
    ("90m", timedelta(minutes=90)),
    ("45s", timedelta(seconds=45)),
    ("1d 12h", timedelta(days=1, hours=12)),
    (" 2h30m ", timedelta(hours=2, minutes=30)),
    ("-1d", timedelta(days=-1)),  # parsed; the API refuses it with its own message
    ("7 00:00:00", timedelta(days=7)),
    ("01:00:00", timedelta(hours=1)),
    ("P7D", timedelta(days=7)),
    ("7 days", timedelta(days=7)),
    ("", None),
])
def test_parses(text, expected):
    assert DurationInput(required=False).clean(text) == expected


@pytest.mark.parametrize("text", ["a week", "seven days", "7x", "d7", "99999999999d", "1e3"])
def test_refuses_other_text(text):
    with pytest.raises(forms.ValidationError):
        DurationInput(required=False).clean(text)


def test_shows_saved_durations_compactly():
    assert format_duration(timedelta(days=90)) == "90d"
    assert format_duration(timedelta(hours=36)) == "36h"
    assert format_duration(timedelta(seconds=1.5)) == "0:00:01.500000"
    assert DurationInput().prepare_value(timedelta(days=7)) == "7d"
