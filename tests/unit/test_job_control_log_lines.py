"""The job-control lines (time limit, cancel on request, late outcome) have the job lines' shape."""

import logging

import pytest

from django_headgate.store.records import ClaimedJob
from django_headgate.worker.logs import log_job_control

JOB = ClaimedJob("01a2-job", "mail", "app.tasks.send", "[]", "{}", 2, 3, 5)


@pytest.mark.parametrize("event, level, text", [
    ("timed_out", logging.WARNING, "ran past its time limit (the attempt fails; its thread keeps its slot "
                                   "until the task returns)"),
    ("cancelled", logging.INFO, "ended cancelled, as cancel() asked"),
    ("late_refused", logging.INFO, "returned after its time limit; the outcome was refused by the fence"),
])
def test_job_control_lines(caplog, event, level, text):
    with caplog.at_level(logging.INFO, logger="django_headgate.worker.jobs"):
        log_job_control(JOB, event, {"worker_id": "w1"}, level)
    [record] = caplog.records
    assert record.levelno == level
    assert record.getMessage() == f"Job 01a2-job (app.tasks.send, queue mail) {text} on attempt 2/3."
    assert (record.action, record.job_id, record.fence, record.worker_id) == (f"job_{event}", "01a2-job", 5, "w1")
