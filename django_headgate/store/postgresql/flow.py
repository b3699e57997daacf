"""PostgreSQL store, flow section (DESIGN §15): key lock rows, the held-back rows of many keys in
one plan, and the wake-up of released jobs."""

from ..fragments import HELD_BACK_INDEXED
from ..flow_fragments import (  # noqa: F401  (statements of this vendor)
    EXISTING_FLOW_KEYS, SQL_COUNT_RUNNING_OF_KEYS, SQL_HELD_BACK_OF_KEY, SQL_HOLD_BACK_MANY,
    SQL_COUNT_RUNNING_IN_QUEUE, SQL_KEYS_OF_JOBS, SQL_MAKE_AVAILABLE, SQL_READ_QUEUE_CONTROL, SQL_SET_CONCURRENCY,
    SQL_DEFER_TO_WINDOW, SQL_HELD_BACK_KEYS, SQL_SET_RATE_WINDOW, READ_FLOW_WINDOW, SET_FLOW_WINDOW,
)

SQL_READ_FLOW_WINDOW = READ_FLOW_WINDOW.format(key='"key"')
SQL_SET_FLOW_WINDOW = SET_FLOW_WINDOW.format(key='"key"')
SQL_EXISTING_FLOW_KEYS = EXISTING_FLOW_KEYS.format(key='"key"')
# A key's lock row, inserted once (a concurrent insert of the same key waits, then does nothing).
SQL_INSERT_FLOW_KEY = 'INSERT INTO headgate_flow_key ("key", window_count) VALUES (%s, 0) ON CONFLICT DO NOTHING'
# Lock a key's row until the transaction ends: claims and releases of one key take turns.
SQL_LOCK_FLOW_KEY = 'SELECT "key" FROM headgate_flow_key WHERE "key" = %s FOR UPDATE'
# The same for several keys, locked in key order (rows are locked as the sort returns them).
SQL_LOCK_FLOW_KEYS = 'SELECT "key" FROM headgate_flow_key WHERE "key" IN ({keys}) ORDER BY "key" FOR UPDATE'
# Lock a queue's control row until the transaction ends: controlled claims of a queue take turns.
SQL_LOCK_QUEUE_CONTROL = "SELECT queue FROM headgate_queue_control WHERE queue = %s FOR UPDATE"
# The first held-back rows of each key, at most so many per key, in claim order: one
# index-ordered read per (key, rows) pair of the two arrays (headgate_job_held_back_idx, whose
# predicate the state test repeats word for word, so no other index can serve it). One plan
# whatever the number of keys, where a UNION ALL of one read per key is planned read by read.
SQL_HELD_BACK_OF_KEYS = f"""
SELECT held.id, held.concurrency_key, held.concurrency_limit
FROM unnest(%s::text[], %s::integer[]) AS k(concurrency_key, rows_of_key)
CROSS JOIN LATERAL (
    SELECT id, concurrency_key, concurrency_limit FROM headgate_job AS j
    WHERE j.concurrency_key = k.concurrency_key AND {HELD_BACK_INDEXED.format(of='j.state')}
    ORDER BY priority DESC, run_at
    LIMIT k.rows_of_key
) AS held
"""


class PostgreSQLFlow:
    def _held_back_of_keys(self, cursor, rows_of_key):
        keys = sorted(rows_of_key)
        cursor.execute(SQL_HELD_BACK_OF_KEYS, [keys, [rows_of_key[key] for key in keys]])
        return cursor.fetchall()
