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
# One running job of a key (leased by worker "w", fence 1) and BEHIND held back behind it, all
# with the same priority and run_at.
SQL_ONE_KEY = """
INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts,
                          fence, fingerprint, errors, tags, retention_class, created_at, concurrency_key,
                          concurrency_limit, lease_owner, lease_expires_at, started_at)
SELECT gen_random_uuid(), 'default', 'tests.testapp.tasks.noop', '[]', '{}', 0,
       CASE WHEN g = 0 THEN 'running' ELSE 'held_back' END, now(), 0, 3, CASE WHEN g = 0 THEN 1 ELSE 0 END,
       'x', '[]', '[]', 'standard_30d', now(), %s, 1, CASE WHEN g = 0 THEN 'w' END,
       CASE WHEN g = 0 THEN now() + interval '1 hour' END, CASE WHEN g = 0 THEN now() END
FROM generate_series(0, %s) AS g
"""


def held_back_index_reads(cursor):
    """(scans, entries read) of headgate_job_held_back_idx, this session's counters included."""
    cursor.execute("SELECT pg_stat_force_next_flush()")  # flushed before the next statement
    cursor.execute("SELECT idx_scan, idx_tup_read FROM pg_stat_user_indexes "
                   "WHERE indexrelname = 'headgate_job_held_back_idx'")
    return cursor.fetchone()


def snapshot_holders(cursor):
    """Other sessions of this database whose snapshot keeps dead rows visible: while one lasts,
    no index entry can be marked dead, deduplicated or not."""
    cursor.execute("SELECT pid, state, backend_xmin, left(query, 80) FROM pg_stat_activity "
                   "WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL")
    return cursor.fetchall()


def entries_read_per_hand_over(store, key):
    with connection.cursor() as cursor:
        cursor.execute(SQL_ONE_KEY, [key, BEHIND])
        # The plan of a drain's hand-over (tests/store/test_hot_plans.py checks it): analysed, and
        # a table this small not read whole.
        cursor.execute("ANALYZE headgate_job")
        cursor.execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
        cursor.execute("SELECT id FROM headgate_job WHERE state = 'running' AND concurrency_key = %s", [key])
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
        holders = snapshot_holders(cursor)
    assert scans >= HAND_OVERS
    return read / scans, holders


def test_each_hand_over_reads_about_one_held_back_index_entry():
    store = get_store("default")
    # About 2 per hand-over here; 100 with the 300 rows in one posting list. A snapshot held
    # meanwhile by another session of this database (an autovacuum ANALYZE on a loaded server)
    # keeps the rows just handed over alive in either case, so a high reading is measured again
    # on another key, at most twice.
    readings = []
    for attempt in range(3):
        per_scan, holders = entries_read_per_hand_over(store, f"k{attempt}")
        readings.append((round(per_scan, 1), holders))
        if per_scan < 25:
            break
    assert per_scan < 25, f"entries read per hand-over, with other snapshots seen at the end: {readings}"
