"""The storable rule (no database): NUL and surrogates become U+FFFD, keys included."""

import pytest
from django.db import DataError, IntegrityError, OperationalError

from django_headgate.worker.dberrors import describe_database_error, is_connection_error, is_permanent_error
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


def test_database_errors_are_described_without_their_text():
    class Driver(Exception):
        sqlstate = "22P05"

    exc = DataError("unsupported Unicode escape sequence\nDETAIL: \\u0000\nCONTEXT: JSON data, line 1: SECRET")
    exc.__cause__ = Driver("SECRET")
    assert describe_database_error(exc) == "DataError (22P05)"
    assert is_permanent_error(exc) and not is_connection_error(exc)


@pytest.mark.parametrize("code, connection_lost", [(2006, True), (2013, True), (1205, False), (1213, False)])
def test_mysql_codes(code, connection_lost):
    exc = OperationalError(code, "text")
    assert is_connection_error(exc) is connection_lost
    assert describe_database_error(exc) == f"OperationalError ({code})"


def test_integrity_error_is_permanent():
    assert is_permanent_error(IntegrityError("CHECK constraint failed"))
