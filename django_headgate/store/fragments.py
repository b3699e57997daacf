"""SQL pieces every vendor shares: column lists, state sets, conditions and statement shapes.

A vendor module builds its statements from these with its own clock expression (``now``), so a
column list or an eligibility rule is written once. Everything here is SQL text with ``%s``
placeholders: values are always bound, never formatted in.
"""

from ..models import TERMINAL_STATES

# Columns a new job row is inserted with, in the order of ``BaseStore.job_params()`` (plus the
# literal state, attempts, fence, errors and created_at the insert rows add).
JOB_COLUMNS = (
    "id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts, fence, "
    "unique_key, fingerprint, errors, tags, retention_class, created_at, timeout"
)
# Columns of a claimed job, in the order of ``ClaimedJob`` (``abort_requested_at`` is turned into
# the flag in Python: SQLite 3.40's RETURNING evaluates ``col IS NOT NULL`` wrongly).
CLAIMED_COLUMNS = (
    "id, queue, task, args, kwargs, attempts, max_attempts, fence, snoozes, timeout, abort_requested_at, "
    "concurrency_key, concurrency_limit"
)
# Columns of an archived job, in the order the sweep's archive copy selects them.
ARCHIVE_COLUMNS = (
    "archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, "
    "result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms"
)
# ``('succeeded', 'dead', 'cancelled')``, from models.TERMINAL_STATES.
TERMINAL_STATES_SQL = "(" + ", ".join(f"'{state.value}'" for state in TERMINAL_STATES) + ")"

# One new job row: {now} is the store clock, {delay} the vendor's "now + bound duration".
INSERT_JOB_ROW = (
    "(%s, %s, %s, %s, %s, %s, 'available', COALESCE(%s, {delay}), "
    "0, %s, 0, %s, %s, '[]', %s, %s, {now}, %s)"
)
# The head of a multi-row job insert; INSERT_JOB_ROW rows follow it.
INSERT_JOBS_HEAD = f"INSERT INTO headgate_job ({JOB_COLUMNS}) VALUES "

# The state test of a row found by its primary key: "(state = 'x') IS NOT FALSE" means
# "state = 'x'" (the column is never NULL) but is no index condition, nor implies the predicate
# of a partial index. Job states fill faster than statistics follow; when they count a state as
# empty (held_back, running), PostgreSQL would scan all of that state's entries in
# headgate_job_claim_any_idx (or all of headgate_job_held_back_idx), filtering on the id, rather
# than probe the primary key.
def state_is(*states, of="state"):
    test = f"= '{states[0]}'" if len(states) == 1 else "IN (" + ", ".join(f"'{s}'" for s in states) + ")"
    return f"({of} {test}) IS NOT FALSE"


RUNNING = state_is("running")
# Held back, written as the predicate of headgate_job_held_back_idx (migration 0015) so that a
# read of a key's held-back rows can use that index and no other ({of}: the state column).
HELD_BACK_INDEXED = "({of} = 'held_back') IS TRUE"
# Ready to claim: highest priority first, then oldest run_at (headgate_job_claim_idx).
READY = "state = 'available' AND run_at <= {now}"
CLAIM_ORDER = "ORDER BY priority DESC, run_at"
# A worker write: only the attempt that holds the fence, while it runs.
FENCED = "id = %s AND fence = %s AND " + RUNNING
# FENCED on a row no other transaction holds (PostgreSQL): the subquery locks it, or skips it
# when someone else has it locked, so the write never waits for a row lock (the caller reads the
# fence to tell a locked row from a stale one). MariaDB locks first, in the write's transaction.
FENCED_UNLOCKED = "id = (SELECT id FROM headgate_job WHERE " + FENCED + " FOR UPDATE SKIP LOCKED)"
# A lease renewal: FENCED, and still leased to this worker.
FENCED_LEASE = FENCED + " AND lease_owner = %s"
# State and fence of some jobs, consistent read without locks (primary key; {ids}: placeholders).
SQL_READ_FENCES = "SELECT id, state, fence FROM headgate_job WHERE id IN ({ids})"
# Give a lease back unspent: available again, the attempt not counted, run_at kept (fenced).
SQL_RELEASE = f"""
UPDATE headgate_job
SET state = 'available', attempts = attempts - 1, lease_owner = NULL, lease_expires_at = NULL,
    started_at = NULL
WHERE {FENCED_LEASE}
"""
# Rescue step 1: running jobs whose lease has lapsed, oldest lapse first, locked ({lock}: the
# vendor's FOR UPDATE SKIP LOCKED, or empty under a single writer).
RESCUE_SELECT = (
    "SELECT id, attempts, lease_owner FROM headgate_job "
    "WHERE state = 'running' AND lease_expires_at < {now} ORDER BY lease_expires_at LIMIT %s {lock}"
)
RELEASE_LEASE = "lease_owner = NULL, lease_expires_at = NULL"
# Expired terminal rows (headgate_job_expires_idx); non-terminal rows never qualify, nor rows a
# legal hold covers ({job_held}: store/holds.held_condition for headgate_job, DESIGN §18).
SWEEP_ELIGIBLE = f"state IN {TERMINAL_STATES_SQL} AND expires_at <= {{now}} AND NOT {{job_held}}"

# Fenced progress write ({value}: the bound JSON, cast where the vendor needs it).
SET_PROGRESS = "UPDATE headgate_job SET progress = {value} WHERE " + FENCED
# Snooze (fenced, as an acknowledgement): available again at {run_at} (the store clock + a bound
# delay), the attempt not counted, one more snooze, lease cleared; the next claim moves the fence.
# {fenced}: FENCED, or FENCED_UNLOCKED.
SNOOZE = (
    "UPDATE headgate_job SET state = 'available', attempts = attempts - 1, run_at = {run_at}, "
    "snoozes = COALESCE(snoozes, 0) + 1, started_at = NULL, " + RELEASE_LEASE + " WHERE {fenced}"
)
# State of one job (primary key).
SQL_GET_STATE = "SELECT state FROM headgate_job WHERE id = %s"
# A job just inserted holds its unique key only until it is terminal (primary key).
SQL_MARK_UNIQUE_UNTIL_FINISHED = "UPDATE headgate_job SET unique_until = 'finished' WHERE id = %s"
# Release the key of a terminal job enqueued until "finished", if it still holds that key
# (primary key; the other conditions make a concurrent release a no-op).
SQL_RELEASE_UNIQUE_KEY = (
    "UPDATE headgate_job SET unique_key = NULL WHERE id = %s AND unique_key = %s "
    f"AND state IN {TERMINAL_STATES_SQL} AND unique_until = 'finished'"
)

# The writes of an operator cancel (one job here, a batch in operation_fragments.py).
CANCEL_SET = "state = 'cancelled', finished_at = {now}, expires_at = {expires_now}, " + RELEASE_LEASE
# Operator cancel of a job that waits: available, waiting for other jobs or held back by a limit
# -> cancelled (primary key).
CANCEL = """
UPDATE headgate_job
SET """ + CANCEL_SET + """
WHERE id = %s AND """ + state_is("available", "waiting", "held_back") + """ {returning}
"""
# The write of an abort request (one job here, a batch in operation_fragments.py).
REQUEST_ABORT_SET = "abort_requested_at = COALESCE(abort_requested_at, {now})"
# Operator cancel of a running job: request its abort (the first request's time is kept); the
# worker reads it back through its lease renewal (primary key).
REQUEST_ABORT = """
UPDATE headgate_job SET """ + REQUEST_ABORT_SET + """
WHERE id = %s AND """ + RUNNING + """ {returning}
"""
# A running attempt whose abort was requested ends cancelled (fenced, primary key; {fenced}:
# FENCED, or FENCED_UNLOCKED).
CANCEL_ABORTED = (
    "UPDATE headgate_job SET state = 'cancelled', finished_at = {now}, expires_at = {expires_now}, "
    + RELEASE_LEASE + " WHERE {fenced} AND abort_requested_at IS NOT NULL"
)
# The writes of an operator retry (one job here, a batch in operation_fragments.py).
RETRY_SET = """state = 'available', run_at = {now}, max_attempts = {greatest}(max_attempts, attempts + 1),
    finished_at = NULL, expires_at = NULL, result = NULL, abort_requested_at = NULL"""
# Operator retry: dead/cancelled -> available now; one more attempt when they were exhausted;
# an earlier abort request is forgotten.
RETRY = """
UPDATE headgate_job
SET """ + RETRY_SET + """
WHERE id = %s AND """ + state_is("dead", "cancelled") + """ {returning}
"""
# A failed or lapsed attempt settles: dead when {dead_if}, else available again at {retry_at}.
# MySQL evaluates SET left to right: attempts/max_attempts (read by the CASEs) are never assigned.
SETTLE_ATTEMPT = (
    "errors = {append_error}, "
    "run_at = CASE WHEN {dead_if} THEN {dead_run_at} ELSE {retry_at} END, "
    "finished_at = CASE WHEN {dead_if} THEN {now} END, "
    "expires_at = CASE WHEN {dead_if} THEN {expires_now} END, "
    "state = CASE WHEN {dead_if} THEN 'dead' ELSE 'available' END, " + RELEASE_LEASE
)
EXHAUSTED = "attempts >= max_attempts"

# Heartbeats: register (or take over) by worker_id; see register_heartbeat().
HEARTBEAT_COLUMNS = "worker_id, instance_id, hostname, pid, queues, started_at, last_heartbeat_at"
HEARTBEAT_TAKEOVER_COLUMNS = ("instance_id", "hostname", "pid", "queues")
# Renew our own heartbeat row (primary key + instance).
RENEW_HEARTBEAT = (
    "UPDATE headgate_worker_heartbeat SET last_heartbeat_at = {now} "
    "WHERE worker_id = %s AND instance_id = %s"
)
# Delete our own heartbeat row on a clean exit (primary key + instance).
SQL_DELETE_HEARTBEAT = "DELETE FROM headgate_worker_heartbeat WHERE worker_id = %s AND instance_id = %s"
# Stale heartbeat rows, oldest first (headgate_heartbeat_last_idx); {exclude_own} is empty or
# EXCLUDE_OWN_HEARTBEAT (the caller's own row is never pruned).
STALE_HEARTBEATS = "last_heartbeat_at < {cutoff} {exclude_own} ORDER BY last_heartbeat_at LIMIT %s"
EXCLUDE_OWN_HEARTBEAT = "AND NOT (worker_id = %s AND instance_id = %s)"
DELETE_HEARTBEATS = "DELETE FROM headgate_worker_heartbeat WHERE worker_id IN ({ids})"

# Sweep step "copy" (select-then-write vendors): the selected rows of queues with an archive
# policy, into the archive; {archive_id} makes a random id, {now_ms} is the store clock in ms.
SWEEP_ARCHIVE = f"""
INSERT INTO headgate_job_archive ({ARCHIVE_COLUMNS})
SELECT {{archive_id}}, j.id, j.queue, j.task, j.args, j.kwargs, j.errors, j.attempts, j.fingerprint,
       j.state, j.result, j.tags, j.created_at, j.finished_at, {{now_ms}}, {{retention_ms}}
FROM headgate_job AS j JOIN headgate_archive_policy AS p ON p.queue = j.queue
WHERE j.id IN ({{ids}})
"""
# Sweep step "select": expired terminal rows, oldest expiry first (headgate_job_expires_idx);
# {lock} skips rows locked by others where the vendor can; {queue_filter}: see queue_filter().
SWEEP_SELECT = (
    "SELECT id FROM headgate_job WHERE " + SWEEP_ELIGIBLE
    + " {queue_filter} ORDER BY expires_at LIMIT %s {lock}"
)
# Sweep step "delete" (same transaction): the selected rows, by primary key, still terminal.
SQL_SWEEP_DELETE = f"DELETE FROM headgate_job WHERE id IN ({{ids}}) AND state IN {TERMINAL_STATES_SQL}"


def placeholders(count):
    """``%s, %s, ...`` for an IN list of ``count`` values (built from a count, never from input)."""
    return ", ".join(["%s"] * count)


def queue_filter(queue, exclude_queues):
    """``(sql, params)`` restricting a sweep to ``queue``, or to every queue but ``exclude_queues``."""
    if queue is not None:
        return "AND queue = %s", [queue]
    if exclude_queues:
        return f"AND queue NOT IN ({placeholders(len(exclude_queues))})", list(exclude_queues)
    return "", []


def register_heartbeat(now, upsert, incoming):
    """The heartbeat register statement: insert, or take the row over on a worker_id conflict.

    ``upsert`` is the vendor's conflict clause (``ON CONFLICT (worker_id) DO UPDATE SET``);
    ``incoming`` formats the incoming value of a column (``EXCLUDED.{}`` or ``VALUES({})``)."""
    takeover = ", ".join(f"{column} = {incoming.format(column)}" for column in HEARTBEAT_TAKEOVER_COLUMNS)
    return (
        f"INSERT INTO headgate_worker_heartbeat ({HEARTBEAT_COLUMNS}) "
        f"VALUES (%s, %s, %s, %s, %s, {now}, {now}) "
        f"{upsert} {takeover}, started_at = {now}, last_heartbeat_at = {now}"
    )


def fail_statement(now, expires_now, append_error, retry_at):
    """Fenced failure, positional parameters ``[error, give_up, delay, give_up, give_up, give_up,
    id, fence]``: retry at ``retry_at`` (holding the delay's ``%s``), or dead when attempts are
    exhausted or give_up. ``append_error`` holds the error's ``{error}``."""
    dead_if = f"(%s OR {EXHAUSTED})"
    settle = SETTLE_ATTEMPT.format(
        append_error=append_error.format(error="%s"), dead_if=dead_if, dead_run_at="run_at",
        retry_at=retry_at, now=now, expires_now=expires_now,
    )
    return f"UPDATE headgate_job SET {settle} WHERE {FENCED}"


def rescue_release_statement(now, expires_now, append_error):
    """Rescue step 2, one row, parameters ``[error, id]``: back to available now, or dead when
    attempts are exhausted, with its LeaseExpired entry (the row is locked by step 1)."""
    settle = SETTLE_ATTEMPT.format(
        append_error=append_error.format(error="%s"), dead_if=EXHAUSTED, dead_run_at=now,
        retry_at=now, now=now, expires_now=expires_now,
    )
    return f"UPDATE headgate_job SET {settle} WHERE id = %s AND {RUNNING}"
