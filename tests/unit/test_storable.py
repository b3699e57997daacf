"""The storable rule (no database): NUL and surrogates become U+FFFD, keys included."""

import pytest

from django_headgate.worker.storable import storable_json, storable_text, storable_value


def test_text_without_bad_characters_is_returned_as_is():
    text = "plain ünïcode 😀"
    assert storable_text(text) is text


def test_nul_and_surrogates_become_replacement_characters():
    assert storable_text("a\x00b\ud800c\udfff") == "a\ufffdb\ufffdc\ufffd"


def test_values_are_cleaned_deeply_keys_included():
    value = {"k\x00": ["x\x00", {"y": "\ud83d"}], "n": 1, "t": (True, None)}
    assert storable_value(value) == {"k\ufffd": ["x\ufffd", {"y": "\ufffd"}], "n": 1, "t": [True, None]}


def test_json_of_none_is_sql_null_and_nan_is_refused():
    assert storable_json(None) is None
    assert storable_json("a\x00") == '"a\\ufffd"'
    with pytest.raises(ValueError):
        storable_json(float("nan"))
