"""Templates of the workflows section's statements (DESIGN §17), formatted by each vendor's
``workflows.py`` with its clock, expiry and lock clauses; the ``SQL_*`` statements here are
declared once for the vendors that run them as they are."""

from .fragments import CLAIMED_COLUMNS, FENCED, state_is

WAITING = state_is("waiting")

# Lock a dependent job's parents at enqueue ({ids}: one %s per parent; {lock}: FOR UPDATE where
# the vendor has row locks), reading their states (primary key).
LOCK_PARENTS = "SELECT id, state FROM headgate_job WHERE id IN ({{ids}}) {lock}"
# Flag the parents not yet ended: their end runs the release step (primary key).
SQL_FLAG_PARENTS = "UPDATE headgate_job SET has_dependents = TRUE WHERE id IN ({ids})"
# A dependent job just inserted: waiting (or available when no parent is pending), its parents
# and its policy (primary key).
RECORD_PARENTS = (
    "UPDATE headgate_job SET state = %s, waiting_for = %s, on_parent_failure = %s, depends_on = {json} "
    "WHERE id = %s"
)
# One edge per pending parent: the head, then one SQL_EDGE_ROW per edge.
SQL_INSERT_EDGE_HEAD = "INSERT INTO headgate_job_dependency (parent_id, child_id) VALUES "
# One edge's values (parent, child).
SQL_EDGE_ROW = "(%s, %s)"
# The waiting dependents of parents that are terminal (edge index, then primary keys).
SQL_DEPENDENTS_OF = """
SELECT d.child_id, p.state, c.on_parent_failure
FROM headgate_job_dependency d
JOIN headgate_job p ON p.id = d.parent_id
JOIN headgate_job c ON c.id = d.child_id
WHERE d.parent_id IN ({ids}) AND p.state IN ('succeeded', 'dead', 'cancelled') AND c.state = 'waiting'
ORDER BY d.child_id
"""
# A waiting job whose parent failed ends cancelled (primary key).
CANCEL_WAITING = (
    "UPDATE headgate_job SET state = 'cancelled', waiting_for = 0, finished_at = {now}, "
    "expires_at = {expires_now} WHERE id = %s AND " + WAITING
)
# Waiting jobs count %s parents less and turn available at zero. MySQL evaluates SET left to
# right: the state is assigned first, from the old count.
RELEASE_WAITING = (
    "UPDATE headgate_job SET state = CASE WHEN waiting_for <= %s THEN 'available' ELSE state END, "
    f"waiting_for = waiting_for - %s WHERE {WAITING} AND id IN ({{ids}})"
)
# -- MySQL/MariaDB and SQLite run the release as it is; PostgreSQL wraps it to NOTIFY workers --
SQL_RELEASE_WAITING = RELEASE_WAITING
# Delete the edges of jobs that no longer wait ({ids} twice: the same ids).
SQL_FORGET_EDGES = (
    "DELETE FROM headgate_job_dependency WHERE child_id IN ({ids}) "
    f"AND child_id NOT IN (SELECT id FROM headgate_job WHERE id IN ({{ids}}) AND {WAITING})"
)
# A dependent job's parent ids (primary key).
SQL_DEPENDS_ON = "SELECT depends_on FROM headgate_job WHERE id = %s"
# The results of a job's parents (primary key).
SQL_PARENT_RESULTS = "SELECT id, result FROM headgate_job WHERE id IN ({ids})"

# The fenced success of a job inside its task's own transaction (current_job().atomic()):
# waits for a row lock (a renewal's, briefly) rather than skipping it.
COMPLETE_FENCED = (
    "UPDATE headgate_job SET state = 'succeeded', result = {json}, finished_at = {now}, "
    "expires_at = {expires_now}, lease_owner = NULL, lease_expires_at = NULL "
    "WHERE " + FENCED
)

# Lease one available job by id, due or not (the testing kit's run_job; primary key).
CLAIM_BY_ID = (
    "UPDATE headgate_job SET state = 'running', attempts = attempts + 1, fence = fence + 1, lease_owner = %s, "
    "lease_expires_at = {now_plus}, started_at = {now} WHERE id = %s AND " + state_is("available")
)
# The claimed columns of one job (primary key).
SQL_READ_CLAIMED = f"SELECT {CLAIMED_COLUMNS} FROM headgate_job WHERE id = %s"

# -- batches --
# An open batch: no total until its block closes.
INSERT_BATCH = (
    "INSERT INTO headgate_batch (id, total, succeeded, dead, cancelled, created_at) VALUES (%s, NULL, 0, 0, 0, {now})"
)
# Members of a batch (primary key): flagged, so that their end runs the release step.
SQL_ADD_BATCH_MEMBERS = "UPDATE headgate_job SET batch_id = %s, has_dependents = TRUE WHERE id IN ({ids})"
# A callback job waits for its batch's end (primary key).
SQL_HOLD_CALLBACK = f"UPDATE headgate_job SET state = 'waiting', waiting_for = 1 WHERE id = %s AND {state_is('available')}"
# Close a batch: its total and callbacks (primary key).
SQL_CLOSE_BATCH = (
    "UPDATE headgate_batch SET total = %s, on_success_id = %s, on_finish_id = %s, on_dead_id = %s WHERE id = %s"
)
# The ended batch members among some jobs, by batch and end state (primary key).
SQL_BATCH_ENDINGS = f"""
SELECT batch_id, state, COUNT(*) FROM headgate_job
WHERE id IN ({{ids}}) AND batch_id IS NOT NULL AND {state_is('succeeded', 'dead', 'cancelled')}
GROUP BY batch_id, state
"""
# Count a batch's ended members (primary key; the row lock orders the members' transactions).
SQL_COUNT_BATCH_ENDINGS = (
    "UPDATE headgate_batch SET succeeded = succeeded + %s, dead = dead + %s, cancelled = cancelled + %s WHERE id = %s"
)
# A batch's counts and callbacks ({lock}: FOR UPDATE where the vendor has row locks, so that the
# read sees the latest committed counts).
READ_BATCH = (
    "SELECT total, succeeded, dead, cancelled, on_success_id, on_finish_id, on_dead_id FROM headgate_batch "
    "WHERE id = %s {lock}"
)
# Mark a batch finished, once (primary key).
FINISH_BATCH = "UPDATE headgate_batch SET finished_at = {now} WHERE id = %s AND finished_at IS NULL"
