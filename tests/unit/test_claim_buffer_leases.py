"""The claim buffer starts a job only while its lease is known to be live; one taken later is
dropped unstarted and handed to on_lapsed (no database: the buffer alone)."""

import time

from django_headgate.store.records import ClaimedJob
from django_headgate.worker.threads import ClaimBuffer


def job(n, fence=1):
    return ClaimedJob(f"id-{n}", "default", "t", "[]", "{}", 1, 3, fence)


def test_a_job_whose_lease_is_no_longer_known_to_be_live_is_dropped():
    lapsed = []
    buffer = ClaimBuffer(on_lapsed=lapsed.append)
    now = time.monotonic()
    buffer.put_all([job(1), job(2)], live_until=now - 0.001)
    buffer.put_all([job(3)], live_until=now + 60)
    assert buffer.take() == job(3)
    assert lapsed == [job(1), job(2)]
    assert len(buffer) == 0


def test_a_renewal_keeps_a_buffered_job_startable():
    lapsed = []
    buffer = ClaimBuffer(on_lapsed=lapsed.append)
    buffer.put_all([job(1), job(2)], live_until=time.monotonic() - 1)
    buffer.renewed([("id-2", 1), ("id-9", 1)], time.monotonic() + 60)  # id-9 is not buffered: ignored
    assert buffer.take() == job(2)
    assert lapsed == [job(1)]


def test_a_renewal_of_another_attempt_changes_nothing():
    lapsed = []
    buffer = ClaimBuffer(on_lapsed=lapsed.append)
    buffer.put_all([job(1, fence=2), job(2)], live_until=time.monotonic() - 1)
    buffer.renewed([("id-1", 1)], time.monotonic() + 60)  # the earlier attempt's lease
    buffer.put_all([job(3)], live_until=time.monotonic() + 60)
    assert buffer.take() == job(3)
    assert lapsed == [job(1, fence=2), job(2)]


def test_remove_takes_one_job_out_unstarted():
    buffer = ClaimBuffer()
    buffer.put_all([job(1), job(2)], live_until=time.monotonic() + 60)
    assert buffer.remove("id-1", 1) and not buffer.remove("id-1", 1) and not buffer.remove("id-2", 7)
    assert buffer.take_unstarted() == [job(2)]
