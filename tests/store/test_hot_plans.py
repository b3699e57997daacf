"""PostgreSQL: the hot statements keep their plans when the statistics lie. A queue's states fill
faster than ANALYZE follows: right after a burst of enqueues the statistics say every row is
available and none running or held back. The worker's statements run prepared, and after five
runs PostgreSQL may keep one generic plan, which guesses 10 rows for an array parameter. These
plans must still probe the primary key once per listed job: a join that compares every listed
job with every other (quadratic in the batch), or a scan of every running or held-back row to
find a few by id (linear in the table), is what made an acknowledgement batch of 256 cost 30 ms
and a held-back job's release grow with its key's backlog (docs/benchmarks.md)."""

import re

import pytest
from django.db import connection

from django_headgate.store.postgresql import flow, jobs, worker
from tests.factories import JobFactory

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql",
                                reason="prepared generic plans are PostgreSQL's")


def generic_plan(cursor, sql, params):
    """EXPLAIN of ``sql``'s generic plan: prepared under a name with ``$n`` parameters."""
    count = iter(range(1, 1000))
    text = re.sub(r"%s", lambda _: f"${next(count)}", sql)
    literals = ", ".join(cursor.mogrify("%s", [value]) for value in params)
    cursor.execute("SET plan_cache_mode = force_generic_plan")
    try:
        cursor.execute(f"PREPARE hot_plan AS {text}")
        cursor.execute(f"EXPLAIN EXECUTE hot_plan({literals})")
        return "\n".join(row[0] for row in cursor.fetchall())
    finally:
        cursor.execute("DEALLOCATE ALL")
        cursor.execute("RESET plan_cache_mode")


@pytest.fixture
def stale_statistics(db):
    """1,000 keyed jobs analysed while all available, then 400 running and 400 held back."""
    JobFactory.create_batch(1000, concurrency_key="k", concurrency_limit=1)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE headgate_job")
        cursor.execute("UPDATE headgate_job SET state = 'running', lease_owner = 'w', fence = 1 "
                       "WHERE id IN (SELECT id FROM headgate_job ORDER BY id LIMIT 400)")
        cursor.execute("UPDATE headgate_job SET state = 'held_back' "
                       "WHERE id IN (SELECT id FROM headgate_job WHERE state = 'available' ORDER BY id LIMIT 400)")
        cursor.execute("SELECT id FROM headgate_job WHERE state = 'running' ORDER BY id LIMIT 3")
        return [row[0] for row in cursor.fetchall()]


def scans_of_the_job_table(plan):
    return re.findall(r"Scan using (\w+) on headgate_job", plan)


def test_the_ack_and_claim_probes_each_acknowledged_job_by_its_primary_key(stale_statistics):
    ids = stale_statistics
    params = [ids, [1] * 3, [None] * 3, "w", 30, 10, 10, "w", 30]
    with connection.cursor() as cursor:
        plan = generic_plan(cursor, worker.SQL_ACK_AND_CLAIM_ANY_QUEUE, params)
    ours, acked = plan.split("CTE acked")[0], plan.split("CTE acked")[1].split("CTE handed")[0]
    assert "Join Filter" not in ours + acked, plan
    assert set(scans_of_the_job_table(ours + acked)) == {"headgate_job_pkey"}, plan


def test_fenced_writes_and_releases_probe_the_primary_key(stale_statistics):
    ids = stale_statistics
    with connection.cursor() as cursor:
        for sql, params in [
            (jobs.SQL_SET_PROGRESS, ['{"a": 1}', ids[0], 1]),
            (jobs.SQL_REQUEST_ABORT, [ids[0]]),
            (flow.SQL_MAKE_AVAILABLE.format(ids="%s, %s"), ids[:2]),
            (flow.SQL_HOLD_BACK_MANY.format(ids="%s, %s"), [*ids[:2], "w"]),
        ]:
            plan = generic_plan(cursor, sql, params)
            assert scans_of_the_job_table(plan) == ["headgate_job_pkey"], (sql, plan)


def test_the_next_held_back_job_of_a_key_is_found_by_the_held_back_index(stale_statistics):
    """The hand-over in the ack-and-claim and PostgreSQL's release read a key's next held-back
    job through headgate_job_held_back_idx (migration 0015), never through a scan of every
    held-back row; the job handed over is then leased by its primary key."""
    ids = stale_statistics
    with connection.cursor() as cursor:
        params = [ids, [1] * 3, [None] * 3, "w", 30, 10, 10, "w", 30]
        plan = generic_plan(cursor, worker.SQL_ACK_AND_CLAIM_ANY_QUEUE, params)
        handed = plan.split("CTE handed")[1].split("CTE picked")[0]
        assert sorted(scans_of_the_job_table(handed)) == ["headgate_job_held_back_idx", "headgate_job_pkey"], plan
        plan = generic_plan(cursor, flow.SQL_HELD_BACK_OF_KEYS, [["k"], [1]])
        assert scans_of_the_job_table(plan) == ["headgate_job_held_back_idx"], plan
