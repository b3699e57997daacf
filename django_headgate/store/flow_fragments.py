"""SQL of the flow section (DESIGN §15) that every vendor shares; ``{key}`` is the vendor's
quoting of the ``headgate_flow_key.key`` column (a reserved word on MariaDB)."""

from .fragments import FENCED, RUNNING, placeholders, state_is
from .records import AllQueuesExcept


def claim_queue_filter(queues):
    """The claim's queue condition for ``queues`` (a list, or AllQueuesExcept) with IN lists."""
    negation = "NOT " if isinstance(queues, AllQueuesExcept) else ""
    return f"AND queue {negation}IN ({placeholders(len(queues))})"


# Store a job's concurrency key and limit, just after its insert (primary key).
SQL_SET_CONCURRENCY = "UPDATE headgate_job SET concurrency_key = %s, concurrency_limit = %s WHERE id = %s"
# The lock rows among some keys, read without locking (primary key; {keys}: placeholders).
EXISTING_FLOW_KEYS = "SELECT {key} FROM headgate_flow_key WHERE {key} IN ({{keys}})"
# Running rows of some keys, per key (headgate_job_flow_key_idx; {keys}: placeholders).
SQL_COUNT_RUNNING_OF_KEYS = (
    "SELECT concurrency_key, COUNT(*) FROM headgate_job WHERE concurrency_key IN ({keys}) AND state = 'running' "
    "GROUP BY concurrency_key"
)
# Claimed jobs over their key's limit are held back (primary key; only while still leased to the
# worker, %s after the ids): no lease, their attempt not counted.
SQL_HOLD_BACK_MANY = (
    "UPDATE headgate_job SET state = 'held_back', attempts = attempts - 1, lease_owner = NULL, "
    f"lease_expires_at = NULL, started_at = NULL WHERE id IN ({{ids}}) AND {RUNNING} AND lease_owner = %s"
)
# Held-back rows of one key in claim order, at most %s (headgate_job_flow_key_idx); a release
# joins one per key with UNION ALL (a derived table: each keeps its own ORDER BY and LIMIT).
SQL_HELD_BACK_OF_KEY = (
    "SELECT * FROM (SELECT id, concurrency_key, concurrency_limit FROM headgate_job "
    "WHERE concurrency_key = %s AND state = 'held_back' ORDER BY priority DESC, run_at LIMIT %s) AS held"
)
# Held-back rows become claimable again, run_at kept (primary key; {ids}: placeholders).
SQL_MAKE_AVAILABLE = f"UPDATE headgate_job SET state = 'available' WHERE id IN ({{ids}}) AND {state_is('held_back')}"
# The distinct concurrency keys of some jobs (primary key; {ids}: placeholders).
SQL_KEYS_OF_JOBS = (
    "SELECT DISTINCT concurrency_key FROM headgate_job WHERE id IN ({ids}) AND concurrency_key IS NOT NULL"
)
# A queue's controls (primary key), read after SQL_LOCK_QUEUE_CONTROL in the same transaction.
SQL_READ_QUEUE_CONTROL = (
    "SELECT paused, concurrency, rate_limit, window_started_at, window_count FROM headgate_queue_control "
    "WHERE queue = %s"
)
# Jobs of one queue holding a lease (headgate_job_claim_idx).
SQL_COUNT_RUNNING_IN_QUEUE = "SELECT COUNT(*) FROM headgate_job WHERE state = 'running' AND queue = %s"
# The queue's rate window after a claim (primary key).
SQL_SET_RATE_WINDOW = "UPDATE headgate_queue_control SET window_started_at = %s, window_count = %s WHERE queue = %s"
# A rate scope's window (primary key; {key}: the vendor's quoting).
READ_FLOW_WINDOW = "SELECT window_started_at, window_count FROM headgate_flow_key WHERE {key} = %s"
# A rate scope's window after an admission (primary key).
SET_FLOW_WINDOW = "UPDATE headgate_flow_key SET window_started_at = %s, window_count = %s WHERE {key} = %s"
# A claimed job past its task's rate waits for the next window (fenced): available again at the
# bound time, no lease, its attempt not counted.
SQL_DEFER_TO_WINDOW = (
    "UPDATE headgate_job SET state = 'available', run_at = %s, attempts = attempts - 1, lease_owner = NULL, "
    "lease_expires_at = NULL, started_at = NULL WHERE " + FENCED
)
# Keys of the first held-back rows in claim order (headgate_job_claim_any_idx), at most %s rows.
SQL_HELD_BACK_KEYS = (
    "SELECT concurrency_key FROM headgate_job WHERE state = 'held_back' ORDER BY priority DESC, run_at LIMIT %s"
)
