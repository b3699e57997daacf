import random

from django_headgate.jobs.ids import uuid7
from django_headgate.worker.backoff import retry_delay_seconds


def test_backoff_grows_and_is_capped():
    rng = random.Random(1)
    delays = [retry_delay_seconds(attempt, 2, 60, rng) for attempt in range(1, 10)]
    assert 1.5 <= delays[0] <= 2.5
    assert 3.0 <= delays[1] <= 5.0
    assert all(0 <= d <= 60 for d in delays)
    assert delays[-1] >= 45


def test_backoff_jitter_spreads_retries():
    rng = random.Random(2)
    assert len({round(retry_delay_seconds(3, 2, 3600, rng), 6) for _ in range(20)}) > 10


def test_uuid7_is_version_7_and_time_ordered():
    ids = [uuid7() for _ in range(200)]
    assert all(u.version == 7 for u in ids)
    prefixes = [u.int >> 80 for u in ids]
    assert prefixes == sorted(prefixes)
