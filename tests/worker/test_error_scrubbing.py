"""Database error texts quote row values; the stored error keeps the exception, not the values."""

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.worker import Worker
from django_headgate.store.entries import SCRUBBED, scrub_database_text

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


# -- any amount of text: cut to the stored length first, then scrubbed --------------------------

FOUR_MIB = 4 * 1024 * 1024


def nested_failure(pieces, piece_text):
    """An exception whose formatted traceback holds ``pieces`` chained exceptions of ``piece_text``."""
    try:
        try:
            raise ValueError(piece_text)
        except ValueError:
            if pieces > 1:
                raise nested_failure(pieces - 1, piece_text) from None
            raise
    except ValueError as exc:
        return exc


def guarded_scrubber(monkeypatch, limit):
    """Replace the scrubber ``describe_error`` calls by one that refuses any text over ``limit``
    characters (before scrubbing it), and return the lengths it was given."""
    from django_headgate.worker.executor import describe_error

    namespace = describe_error.__globals__  # the module that defines describe_error
    real, seen = namespace["scrub_database_text"], []

    def scrub(text, *args, **kwargs):
        assert len(text) <= limit, f"the scrubber was given {len(text):,} characters"
        seen.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setitem(namespace, "scrub_database_text", scrub)
    return seen


@pytest.mark.parametrize("exc", [
    ValueError("could not parse " + "Duplicate entry '" * (FOUR_MIB // 17)),
    nested_failure(64, "DETAIL:  Key (a)=(b) already exists.\n" * (FOUR_MIB // 64 // 37)),
], ids=["4 MiB message", "4 MiB traceback"])
def test_the_scrubber_sees_only_what_is_stored(monkeypatch, exc):
    """The structural bound on the scrubber's work: whatever the exception's size, it is given
    at most the stored length of a message or traceback at a time, and about that in all."""
    from django_headgate.store.entries import MESSAGE_MAX_CHARS, TRACEBACK_MAX_CHARS
    from django_headgate.worker.executor import describe_error

    seen = guarded_scrubber(monkeypatch, limit=TRACEBACK_MAX_CHARS)
    entry = describe_error(exc, 1)
    assert sum(seen) <= MESSAGE_MAX_CHARS + TRACEBACK_MAX_CHARS + MESSAGE_MAX_CHARS
    assert len(entry["message"]) <= MESSAGE_MAX_CHARS and len(entry["traceback"]) <= TRACEBACK_MAX_CHARS


def test_a_value_cut_at_the_stored_length_is_removed_up_to_the_cut():
    from django_headgate.worker.error_entries import describe_error

    values = "".join(f"Duplicate entry '{SECRET}-{n}" for n in range(FOUR_MIB // 30))
    entry = describe_error(ValueError(values), 1)
    assert SECRET not in entry["message"] and SECRET not in entry["traceback"]
    assert entry["message"] == "Duplicate entry '[value removed]"
    assert entry["traceback"].endswith("ValueError: Duplicate entry '[value removed]…\n")


def test_every_database_detail_of_a_4_mib_traceback_is_removed():
    from django_headgate.worker.error_entries import describe_error

    lines = (f"DETAIL:  Key (email)=({SECRET}) already exists.\n"
             f"LINE 1: INSERT INTO t VALUES ('{SECRET}')\n"
             "                              ^\n"
             f"Incorrect integer value: '{SECRET}' for column `n` at row 1\n")
    exc = nested_failure(16, "duplicate key value\n" + lines * (FOUR_MIB // 16 // len(lines)))
    entry = describe_error(exc, 1)
    assert SECRET not in entry["message"] and SECRET not in entry["traceback"]
    assert entry["message"].startswith(f"duplicate key value\n{SCRUBBED}\n{SCRUBBED}\nIncorrect integer value: "
                                       "'[value removed]' for column `n` at row 1\n")
    assert "Traceback (most recent call last)" in entry["traceback"]  # frames survive a long message


def test_a_line_start_that_looks_like_detail_is_found_at_any_depth():
    text = "x\n" * 100_000 + "  \t HINT: " + SECRET + "\n" + "Incorrect " * 100_000 + "value: 'v' for key 'k'"
    scrubbed = scrub_database_text(text)
    assert SECRET not in scrubbed and scrubbed.count(SCRUBBED) == 1
    assert scrubbed.endswith("Incorrect Incorrect value: '[value removed]' for key 'k'")


def test_an_exception_whose_str_fails_still_has_an_entry():
    from django_headgate.worker.error_entries import describe_error

    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no text")

    entry = describe_error(Unprintable(), 2)
    assert entry["type"].endswith("Unprintable") and entry["attempt"] == 2
    assert entry["message"] == "<exception str() failed>"
