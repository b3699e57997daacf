"""Database error texts quote row values; the stored error keeps the exception, not the values."""

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.worker import Worker
from django_headgate.worker.executor import SCRUBBED, scrub_database_text

SECRET = "secret-user-4111"


@pytest.mark.django_db(transaction=True)
def test_a_unique_violation_is_stored_without_the_value():
    job = headgate.enqueue("tests.testapp.tasks.duplicate_username", args=(SECRET,), max_attempts=1)
    Worker(burst=True, concurrency=1).run()
    row = Job.objects.get(pk=job.id)
    entry = row.errors[0]
    assert row.state == "dead" and entry["type"] == "IntegrityError"
    assert SECRET not in entry["message"] and SECRET not in entry["traceback"]
    assert "IntegrityError" in entry["traceback"]


def test_postgresql_detail_context_hint_and_line_are_removed():
    text = (
        'duplicate key value violates unique constraint "u"\n'
        "DETAIL:  Key (email)=(a@b.example) already exists.\n"
        "CONTEXT:  SQL statement \"INSERT INTO t VALUES ('x@y.example')\"\n"
        "HINT:  something about 'z@w.example'\n"
        "LINE 1: INSERT INTO t VALUES ('q@r.example')\n"
        "                              ^\n"
        "end"
    )
    scrubbed = scrub_database_text(text)
    for value in ("a@b.example", "x@y.example", "z@w.example", "q@r.example", "^"):
        assert value not in scrubbed
    assert scrubbed.startswith('duplicate key value violates unique constraint "u"\n')
    assert scrubbed.count(SCRUBBED) == 4 and scrubbed.endswith("end")


def test_mariadb_quoted_values_are_removed():
    text = """(1062, "Duplicate entry 'it's 'secret' for key 'username'")"""
    scrubbed = scrub_database_text(text)
    assert "secret" not in scrubbed and "for key 'username'" in scrubbed
    assert "Incorrect integer value: '[value removed]'" in scrub_database_text(
        "Incorrect integer value: 'abc' for column `n` at row 1")


def test_ordinary_messages_are_unchanged():
    assert scrub_database_text("ValueError: the DETAIL: is in the middle") == "ValueError: the DETAIL: is in the middle"
