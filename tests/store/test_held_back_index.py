"""PostgreSQL: a hand-over reads about one entry of ``headgate_job_held_back_idx`` per job, even
when every job behind the key shares its index key (one ``enqueue_many``: same key, priority and
run_at). With B-tree deduplication those entries were one posting list, which could be marked
dead only when all its rows were, so each hand-over re-read the rows handed over before it
(about 110 per job behind one busy key; migration 0016)."""

import pytest
from django.db import connection

from django_headgate.store import get_store
from django_headgate.store.records import Completion

pytestmark = [pytest.mark.skipif(connection.vendor != "postgresql", reason="posting lists are PostgreSQL's"),
              pytest.mark.django_db(transaction=True)]

BEHIND = 300
HAND_OVERS = 200
# One running job of key "k" (leased by worker "w", fence 1) and BEHIND held back behind it, all
# with the same priority and run_at.
SQL_ONE_KEY = """
INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts,
                          fence, fingerprint, errors, tags, retention_class, created_at, concurrency_key,
                          concurrency_limit, lease_owner, lease_expires_at, started_at)
SELECT gen_random_uuid(), 'default', 'tests.testapp.tasks.noop', '[]', '{}', 0,
       CASE WHEN g = 0 THEN 'running' ELSE 'held_back' END, now(), 0, 3, CASE WHEN g = 0 THEN 1 ELSE 0 END,
       'x', '[]', '[]', 'standard_30d', now(), 'k', 1, CASE WHEN g = 0 THEN 'w' END,
       CASE WHEN g = 0 THEN now() + interval '1 hour' END, CASE WHEN g = 0 THEN now() END
FROM generate_series(0, %s) AS g
"""


def held_back_index_reads(cursor):
    """(scans, entries read) of headgate_job_held_back_idx, this session's counters included."""
    cursor.execute("SELECT pg_stat_force_next_flush()")  # flushed before the next statement
    cursor.execute("SELECT idx_scan, idx_tup_read FROM pg_stat_user_indexes "
                   "WHERE indexrelname = 'headgate_job_held_back_idx'")
    return cursor.fetchone()


def test_each_hand_over_reads_about_one_held_back_index_entry():
    store = get_store("default")
    with connection.cursor() as cursor:
        cursor.execute(SQL_ONE_KEY, [BEHIND])
        # The plan of a drain's hand-over (tests/store/test_hot_plans.py checks it): analysed, and
        # a table this small not read whole.
        cursor.execute("ANALYZE headgate_job")
        cursor.execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
        cursor.execute("SELECT id FROM headgate_job WHERE state = 'running'")
        job_id, fence = cursor.fetchone()[0], 1
        scans_before, read_before = held_back_index_reads(cursor)
    for _ in range(HAND_OVERS):
        accepted, claimed = store.acknowledge_and_claim([Completion(job_id, fence, None)], "w", None, 16, 30)
        assert accepted == {job_id} and [job.handed_over for job in claimed] == [True]
        job_id, fence = claimed[0].id, claimed[0].fence
    with connection.cursor() as cursor:
        scans, read = (after - before for after, before in zip(held_back_index_reads(cursor),
                                                               (scans_before, read_before)))
        cursor.execute("RESET enable_seqscan; RESET enable_bitmapscan")
    assert scans >= HAND_OVERS
    # About 2 per hand-over here (more while another transaction keeps rows just handed over
    # visible); 100 with the 300 rows in one posting list.
    assert read / scans < 25, f"{read} entries read in {scans} scans"
