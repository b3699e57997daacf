"""HEADGATE["POOLING"]: its values, what transaction pooling turns off, and its system checks
(no database)."""

import pytest

from django_headgate.checks import E_POOLING_DATABASE, W_POOLING_PREPARED, W_POOLING_SESSION_STATE, check_pooling
from django_headgate.conf import prepared_statements_enabled, transaction_pooled, validate_settings

# The checks read DATABASES only; no connection is made.
pytestmark = pytest.mark.filterwarnings("ignore:Overriding setting DATABASES")

POSTGRES = {"ENGINE": "django.db.backends.postgresql", "NAME": "app", "DISABLE_SERVER_SIDE_CURSORS": True}


def test_default_is_no_pooling_and_prepared_statements_allowed():
    values, errors = validate_settings({})
    assert (values["pooling"], errors) == ({}, [])
    assert not transaction_pooled("default")
    assert prepared_statements_enabled("default")


def test_statement_pooling_and_typos_are_refused_naming_the_alias():
    _, errors = validate_settings({"POOLING": {"default": "statement", "jobs": "Transaction"}})
    assert [name for name, _ in errors] == ["HEADGATE['POOLING']['default']", "HEADGATE['POOLING']['jobs']"]
    assert "must be one of 'session', 'transaction' (got 'statement')" in errors[0][1]


def test_transaction_pooling_turns_prepared_statements_off_for_that_alias_only(settings):
    settings.HEADGATE = {**settings.HEADGATE, "POOLING": {"default": "transaction", "jobs": "session"}}
    assert transaction_pooled("default") and not transaction_pooled("jobs")
    assert not prepared_statements_enabled("default")
    assert prepared_statements_enabled("jobs")


def test_check_names_an_unknown_or_non_postgresql_alias(settings):
    settings.DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "x"}}
    settings.HEADGATE = {**settings.HEADGATE, "POOLING": {"default": "transaction", "nowhere": "session"}}
    messages = check_pooling()
    assert [m.id for m in messages] == [E_POOLING_DATABASE, E_POOLING_DATABASE]
    assert "'default' is not a PostgreSQL database" in messages[0].msg
    assert "HEADGATE['POOLING']['nowhere'] names a database alias that is not in DATABASES" in messages[1].msg


def test_check_warns_about_options_that_need_a_session(settings):
    settings.DATABASES = {
        "default": {**POSTGRES, "OPTIONS": {"server_side_binding": True, "prepare_threshold": 5,
                                            "assume_role": "app_owner"}},
        "plain": {**POSTGRES, "DISABLE_SERVER_SIDE_CURSORS": False},
        "direct": {**POSTGRES, "OPTIONS": {"server_side_binding": True, "prepare_threshold": 5}},
    }
    settings.HEADGATE = {**settings.HEADGATE, "POOLING": {"default": "transaction", "plain": "transaction",
                                                          "direct": "session"}}
    messages = check_pooling()
    assert [(m.obj, m.id) for m in messages] == [
        ("HEADGATE['POOLING']['default']", W_POOLING_PREPARED),
        ("HEADGATE['POOLING']['default']", W_POOLING_SESSION_STATE),
        ("HEADGATE['POOLING']['plain']", W_POOLING_SESSION_STATE),
    ]
    assert "PgBouncer before 1.21" in messages[0].msg
    assert "DISABLE_SERVER_SIDE_CURSORS" in messages[2].msg
