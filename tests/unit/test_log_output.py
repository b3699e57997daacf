"""The commands' log output without a database: the JSON formatter, the default console handler
(present only when no handler reaches Headgate's records), the level per verbosity, the progress
line kept off log lines, log-safe names, and duty outcome texts."""

import io
import json
import logging
import sys
from contextlib import contextmanager

import pytest
from django.db import DataError

from django_headgate.conf import validate_settings
from django_headgate.management.console import ERASE_LINE, CommandLogging, ConsoleHandler, ProgressLine
from django_headgate.jsonlog import JsonFormatter
from django_headgate.maintenance.duty import describe_failure, outcome_note
from django_headgate.values.text import loggable
from tests.acceptance.helpers import render_terminal

HEADGATE = logging.getLogger("django_headgate")


@contextmanager
def bare_logging():
    """Django's default LOGGING only (handlers on the ``django`` logger): tests/settings.py's
    handler on ``django_headgate`` and pytest's capture handlers on the root logger (added for
    the test's call, so this runs in the test's body) are taken away and given back after it."""
    root = logging.getLogger()
    saved = {logger: logger.handlers[:] for logger in (HEADGATE, root)}
    level = HEADGATE.level
    for logger, handlers in saved.items():
        for handler in handlers:
            logger.removeHandler(handler)
    HEADGATE.setLevel(logging.NOTSET)
    try:
        yield
    finally:
        for logger, handlers in saved.items():
            for handler in logger.handlers[:]:
                logger.removeHandler(handler)
            for handler in handlers:
                logger.addHandler(handler)
        HEADGATE.setLevel(level)


def make_record(message="Job %s failed.", args=("j1",), level=logging.WARNING, **extra):
    record = logging.LogRecord("django_headgate.worker.jobs", level, __file__, 1, message, args, None)
    record.__dict__.update(extra)
    return record


def test_json_line_has_time_level_logger_message_and_the_extra_fields():
    line = JsonFormatter().format(make_record(job_id="j1", task="app.tasks.send", queue="mail", attempt=2,
                                              when=object()))
    parsed = json.loads(line)
    assert "\n" not in line
    assert parsed["level"] == "WARNING" and parsed["logger"] == "django_headgate.worker.jobs"
    assert parsed["message"] == "Job j1 failed."
    assert parsed["time"].endswith("+00:00")
    assert (parsed["job_id"], parsed["task"], parsed["queue"], parsed["attempt"]) == ("j1", "app.tasks.send", "mail", 2)
    assert parsed["when"].startswith("<object object")  # not JSON: its str()
    assert "args" not in parsed and "msg" not in parsed and "levelno" not in parsed


def test_json_line_escapes_the_line_and_paragraph_separators():
    """Valid JSON, but line breaks to many log readers: a record stays one line."""
    line = JsonFormatter().format(make_record("Job %s (%s) failed.", ("j1", "a.b\u2028FAKE"), task="x\u2029y"))
    assert "\u2028" not in line and "\u2029" not in line and len(line.splitlines()) == 1
    parsed = json.loads(line)
    assert parsed["message"] == "Job j1 (a.b\u2028FAKE) failed." and parsed["task"] == "x\u2029y"


def test_json_line_carries_the_traceback_of_exc_info():
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("django_headgate", logging.ERROR, __file__, 1, "x\ny", (), sys.exc_info())
    parsed = json.loads(JsonFormatter().format(record))
    assert parsed["message"] == "x\ny" and "ValueError: boom" in parsed["exc_info"]


def test_default_handler_is_added_when_no_handler_reaches_headgate_records():
    with bare_logging():
        assert logging.getLogger("django").handlers  # Django's default LOGGING is in force
        with CommandLogging(1, "text") as console:
            assert isinstance(console.handler, ConsoleHandler) and console.handler in HEADGATE.handlers
            assert HEADGATE.level == logging.INFO
        assert HEADGATE.handlers == [] and HEADGATE.level == logging.NOTSET


@pytest.mark.parametrize("where", ["django_headgate", "root", "child"])
def test_a_host_handler_anywhere_on_the_way_keeps_the_default_handler_out(where):
    with bare_logging():
        logger = {"django_headgate": HEADGATE, "root": logging.getLogger(),
                  "child": logging.getLogger("django_headgate.worker.jobs")}[where]
        host = logging.StreamHandler(io.StringIO())
        logger.addHandler(host)
        try:
            with CommandLogging(1, "text") as console:
                assert console.handler is None
                assert not any(isinstance(h, ConsoleHandler) for h in HEADGATE.handlers)
        finally:
            logger.removeHandler(host)


def test_a_handler_behind_propagate_false_does_not_count():
    with bare_logging():
        logging.getLogger().addHandler(host := logging.StreamHandler(io.StringIO()))
        HEADGATE.propagate = False
        try:
            with CommandLogging(1, "text") as console:
                assert console.handler is not None
        finally:
            HEADGATE.propagate = True
            logging.getLogger().removeHandler(host)


@pytest.mark.parametrize(("verbosity", "host_level", "level"), [
    (0, logging.WARNING, logging.ERROR), (1, logging.WARNING, logging.WARNING),
    (1, logging.NOTSET, logging.INFO), (2, logging.WARNING, logging.INFO), (3, logging.WARNING, logging.DEBUG),
])
def test_level_per_verbosity_keeps_the_hosts_level_at_the_default(verbosity, host_level, level):
    with bare_logging():
        HEADGATE.setLevel(host_level)
        with CommandLogging(verbosity, "text"):
            assert HEADGATE.level == level
        assert HEADGATE.level == host_level


def test_json_format_is_used_by_the_default_handler():
    with bare_logging():
        with CommandLogging(1, "json") as console:
            assert isinstance(console.handler.formatter, JsonFormatter)


def test_log_format_setting_is_text_or_json():
    assert validate_settings({})[0]["log_format"] == "text"
    assert validate_settings({"LOG_FORMAT": "json"})[1] == []
    _, errors = validate_settings({"LOG_FORMAT": "xml"})
    assert errors == [("HEADGATE['LOG_FORMAT']", "HEADGATE['LOG_FORMAT'] must be 'text' or 'json' (got 'xml').")]


class Terminal(io.StringIO):
    def isatty(self):
        return True


class Wrapper:
    """Django's OutputWrapper as far as the progress line uses it."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text, ending="\n"):
        self.stream.write(text + ending)

    def flush(self):
        pass

    def isatty(self):
        return self.stream.isatty()


def test_log_lines_erase_the_progress_line_and_draw_it_again():
    with bare_logging():
        terminal = Terminal()
        with CommandLogging(1, "text") as console:
            console.handler.setStream(terminal)  # stdout and stderr on one terminal
            line, why_not = console.progress_line(Wrapper(terminal), None)
            assert why_not is None
            line.show("running   1  done 0  0.0 jobs/s")
            logging.getLogger("django_headgate.worker.jobs").warning("Job j1 failed.")
            line.show("running   0  done 1  0.5 jobs/s")
            line.clear()
        output = terminal.getvalue()
        shown = render_terminal(output)
        assert len(shown) == 1 and shown[0].endswith("WARNING django_headgate.worker.jobs: Job j1 failed.")
        assert "jobs/s" not in shown[0]
        assert output.count(f"{ERASE_LINE}running   1") == 2  # drawn, then drawn again after the record


def test_no_progress_line_off_a_terminal_or_beside_a_host_terminal_handler():
    with bare_logging():
        with CommandLogging(1, "text") as console:
            assert console.progress_line(Wrapper(io.StringIO()), True) == (None, "stdout is not a terminal")
            assert console.progress_line(Wrapper(Terminal()), False) == (None, None)
        HEADGATE.addHandler(host := logging.StreamHandler(Terminal()))
        try:
            with CommandLogging(1, "text") as console:
                assert console.progress_line(Wrapper(Terminal()), None) == (
                    None, "the LOGGING handlers write to the terminal")
        finally:
            HEADGATE.removeHandler(host)


def test_progress_line_suspended_draws_nothing_before_it_was_shown():
    terminal = Terminal()
    line = ProgressLine(terminal.write, terminal.flush)
    with line.suspended():
        terminal.write("note\n")
    assert terminal.getvalue() == "note\n"


@pytest.mark.parametrize(("text", "shown"), [
    ("app.tasks.send", "app.tasks.send"),
    ("a.b\nFAKE 2025 ERROR line", "'a.b\\nFAKE 2025 ERROR line'"),
    ("a.b\x1b[31m", "'a.b\\x1b[31m'"),
    ("a.b\u2028FAKE line", "'a.b\\u2028FAKE line'"),
    ("a.b\u2029FAKE line", "'a.b\\u2029FAKE line'"),
    ("x" * 300, "x" * 255),
])
def test_names_from_a_row_cannot_forge_log_lines(text, shown):
    assert loggable(text) == shown


def test_duty_failure_text_keeps_class_and_first_line_without_database_detail():
    error = DataError('new row violates check constraint "c"\nDETAIL:  Failing row contains (secret@example.com).')
    assert describe_failure(error) == 'DataError: new row violates check constraint "c"'
    mysql = DataError("Duplicate entry 'secret@example.com' for key 'email'")
    assert "secret" not in describe_failure(mysql)


def test_outcome_notes():
    assert outcome_note("zero_or_contended") == "no rows: nothing to do, or another maintainer held the lock"
    assert outcome_note("zero_or_contended", contended=True) == "another maintainer held the lock"
    assert outcome_note("zero_or_contended", contended=False) == "nothing to do"
    assert outcome_note("rescued") is None


def claimed(attempt, max_attempts):
    from django_headgate.store.records import ClaimedJob

    return ClaimedJob("01a2-job", "mail", "app.tasks.send", "[]", "{}", attempt, max_attempts, 7)


@pytest.mark.parametrize(("attempt", "state", "delay", "level", "ending"), [
    (1, "available", 0.16234, logging.WARNING, "RuntimeError; will be retried in 0.162 s."),
    (2, "available", 3600, logging.WARNING, "RuntimeError; will be retried in 3600 s."),
    (3, "dead", 0, logging.ERROR, "RuntimeError; dead."),
    (1, "dead", 0, logging.ERROR, "RuntimeError; dead, not retried (a permanent error)."),
])
def test_failure_line_says_what_happens_next(caplog, attempt, state, delay, level, ending):
    from django_headgate.worker.logs import log_job_failed

    with caplog.at_level(logging.DEBUG, logger="django_headgate.worker.jobs"):
        log_job_failed(claimed(attempt, 3), "RuntimeError", state, delay, {"worker_id": "w1"})
    [record] = caplog.records
    assert record.levelno == level
    assert record.getMessage() == (f"Job 01a2-job (app.tasks.send, queue mail) failed on attempt {attempt}/3: "
                                   + ending)
    assert (record.job_id, record.task, record.queue, record.attempt, record.error_type, record.worker_id) == (
        "01a2-job", "app.tasks.send", "mail", attempt, "RuntimeError", "w1")


def test_success_lines_are_not_built_unless_debug_is_enabled(caplog):
    from django_headgate.worker.executor import Outcome
    from django_headgate.worker.logs import log_jobs_succeeded

    def outcomes():
        yield Outcome(claimed(1, 3), result_json="1", seconds=0.25)
        raise AssertionError("iterated although DEBUG is off")

    with caplog.at_level(logging.INFO, logger="django_headgate.worker.jobs"):
        log_jobs_succeeded(outcomes(), {})
    with caplog.at_level(logging.DEBUG, logger="django_headgate.worker.jobs"):
        log_jobs_succeeded([Outcome(claimed(1, 3), result_json="1", seconds=0.25)], {})
    [record] = caplog.records
    assert record.getMessage() == "Job 01a2-job (app.tasks.send, queue mail) succeeded on attempt 1/3 in 0.250 s."


def test_snooze_line_names_the_job_like_the_other_job_lines(caplog):
    from django_headgate.worker.logs import log_job_snoozed

    with caplog.at_level(logging.INFO, logger="django_headgate.worker.jobs"):
        log_job_snoozed(claimed(1, 3), 30.0, {"worker_id": "w1"})
    [record] = caplog.records
    assert record.getMessage() == ("Job 01a2-job (app.tasks.send, queue mail) snoozed for 30 s on attempt 1/3 "
                                   "(the attempt is not spent).")
    assert (record.action, record.job_id, record.snooze_seconds) == ("job_snoozed", "01a2-job", 30.0)
