"""Loops that retry: jittered reconnect backoff and at most one log line a second per event."""

import logging
import random

from django_headgate.worker.backoff import reconnect_delay_seconds
from django_headgate.worker.logs import RateLimitedLog


def test_reconnect_delay_grows_is_jittered_and_capped():
    rng = random.Random(7)
    delays = [reconnect_delay_seconds(n, base_seconds=0.05, max_seconds=2.0, rng=rng) for n in range(1, 12)]
    assert 0.025 <= delays[0] <= 0.05
    assert all(1.0 <= d <= 2.0 for d in delays[7:])
    assert len({round(d, 6) for d in delays}) == len(delays)  # jittered, never in lockstep


def test_repeats_within_a_second_are_counted_not_logged(caplog):
    now = [100.0]
    log = RateLimitedLog(logging.getLogger("django_headgate.test"), every_seconds=1.0, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="django_headgate"):
        for step in range(50):  # 50 failures in 0.98 s
            now[0] = 100.0 + step * 0.02
            log.log(logging.WARNING, "Worker lost the database (%s); retrying.", "OperationalError", action="db_error")
        now[0] = 101.5
        log.log(logging.WARNING, "Worker lost the database (%s); retrying.", "OperationalError", action="db_error")
    assert len(caplog.records) == 2
    assert caplog.records[1].suppressed == 49
    log.reset("db_error")
    assert log.log(logging.WARNING, "again", action="db_error") is True
