"""SQL shapes of the operator verbs by filter (DESIGN §16): one bounded batch is a select of at
most ``limit`` matching ids (keyset on the primary key, locked where the vendor can), then one
write of exactly those ids that re-checks the state, so a job a worker claimed meanwhile is
never overwritten. Each vendor formats these with its clock (``{now}``) and lock clause.

Format fields filled at call time: ``{states}`` and ``{ids}`` (placeholders built from a count),
``{filters}`` (conditions from the closed set below), ``{eligible}`` (an action's extra rule).
The ``SQL_*`` statements here read the same on every vendor: the vendors' ``operations.py``
import them and format only the shapes that take their clock, cast or lock clause.
"""

from .fragments import CANCEL_SET, REQUEST_ABORT_SET, RETRY_SET, state_is

# Up to %s jobs in some states past a keyset id, by primary key ({lock}: FOR UPDATE SKIP LOCKED
# or empty under a single writer).
OPERATION_SELECT = (
    "SELECT id FROM headgate_job WHERE state IN ({{states}}) {{eligible}} AND id > %s {{filters}} "
    "ORDER BY id LIMIT %s {lock}"
)
# Read a page of matching jobs without locking them (list, dry run).
SQL_OPERATION_SELECT_UNLOCKED = OPERATION_SELECT.format(lock="")

# Retry the selected dead/cancelled jobs (primary key; the state is checked again).
OPERATION_RETRY = "UPDATE headgate_job SET " + RETRY_SET + " WHERE id IN ({{ids}}) AND state IN ({{states}})"
# Cancel the selected jobs that wait (primary key; still available, waiting for other jobs or
# held back by a limit).
OPERATION_CANCEL = (
    "UPDATE headgate_job SET " + CANCEL_SET
    + " WHERE id IN ({{ids}}) AND state IN ('available', 'waiting', 'held_back')"
)
# Request the abort of the selected running jobs (primary key; still running).
OPERATION_REQUEST_ABORT = (
    "UPDATE headgate_job SET " + REQUEST_ABORT_SET + " WHERE id IN ({{ids}}) AND state = 'running'"
)
# Make the selected deferred or snoozed jobs due now (primary key; still available, not yet due).
OPERATION_RUN_NOW = (
    "UPDATE headgate_job SET run_at = {now} WHERE id IN ({{ids}}) AND " + state_is("available") + " AND run_at > {now}"
)
# Move the selected waiting jobs to a bound time (primary key; still available).
SQL_OPERATION_RESCHEDULE = f"UPDATE headgate_job SET run_at = %s WHERE id IN ({{ids}}) AND {state_is('available')}"
# Delete the selected jobs that never ran (primary key; the rule is checked again).
SQL_OPERATION_DISCARD = "DELETE FROM headgate_job WHERE id IN ({ids}) AND (state IN ({states})) IS NOT FALSE {eligible}"

# enqueue(meta=): the meta of a job just inserted, in the enqueue's transaction (primary key; an
# idempotent replay's holder keeps its own; {value}: the bound JSON, cast where the vendor needs it).
SET_JOB_META = "UPDATE headgate_job SET meta = {value} WHERE id = %s AND meta IS NULL AND attempts = 0"
# current_job().meta and the consumer span: the meta of one job (primary key).
SQL_READ_JOB_META = "SELECT meta FROM headgate_job WHERE id = %s"

# A job that never ran (no attempt spent, never snoozed) and that no job or batch waits for
# (discard deletes only these: a deleted parent or batch member would leave its dependents or its
# batch waiting for ever).
DISCARDABLE = "AND attempts = 0 AND snoozes IS NULL AND has_dependents IS NOT TRUE"
# A waiting job not yet due (run-now changes only these).
NOT_YET_DUE = "AND run_at > {now}"

# Filter conditions (the closed set; values always bound). Tag and age are the vendor's.
FILTER_QUEUE = "AND queue = %s"
FILTER_TASK = "AND task = %s"


def action_eligible(now):
    """The extra rule of each action that has one, with the vendor's clock ``now``."""
    return {"run_now": NOT_YET_DUE.format(now=now), "discard": DISCARDABLE}


def filter_tag(tag_contains, tags):
    """The tag filter (the job carries the bound tag): the vendor's tag test ``tag_contains``
    (its compliance section's, ``{tags}`` contains ``{tag}``) on the column expression ``tags``."""
    return "AND " + tag_contains.format(tags=tags, tag="%s")
