"""The worker's buffer size (worker/buffer_size.py): the minimum until jobs are seen to be
short, then as many as wait less than SHORT_WAIT_SECONDS, never above the maximum."""

from django_headgate.worker.buffer_size import SHORT_WAIT_SECONDS, BufferSize


def test_the_minimum_before_any_job_ran():
    sizes = BufferSize(concurrency=4, per_thread=4, max_per_thread=16)
    assert (sizes.current, sizes.minimum, sizes.maximum, sizes.describe()) == (16, 16, 64, "16-64")


def test_short_jobs_grow_it_to_the_maximum_and_long_ones_bring_it_back():
    sizes = BufferSize(concurrency=4, per_thread=4, max_per_thread=16)
    for _ in range(5):
        sizes.observe(0.0001)
    assert sizes.current == 64
    for _ in range(60):
        sizes.observe(1.0)
    assert sizes.current == 16


def test_in_between_a_claimed_job_waits_at_most_the_short_wait():
    sizes = BufferSize(concurrency=4, per_thread=1, max_per_thread=256)
    sizes.observe(0.005)  # 5 ms jobs on 4 threads: 40 buffered jobs wait 50 ms at most
    assert sizes.current == int(4 * SHORT_WAIT_SECONDS / 0.005) == 40
    sizes.observe(0.0)
    assert 40 <= sizes.current <= 45  # the mean moves a tenth of the way


def test_a_maximum_below_the_minimum_is_the_minimum_and_fixed_never_moves():
    assert BufferSize(concurrency=2, per_thread=8, max_per_thread=2).maximum == 16
    fixed = BufferSize.fixed(5)
    fixed.observe(0.0001)
    assert (fixed.current, fixed.describe()) == (5, "5")
