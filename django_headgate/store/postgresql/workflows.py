"""PostgreSQL store, workflows section: the parents of a dependent job, the release step (which
wakes idle workers when it makes jobs available) and the success of parents, acknowledged
apart from the batch in a transaction with their release."""

from ..workflow_statements import (
    CANCEL_WAITING, CLAIM_BY_ID, COMPLETE_FENCED, FINISH_BATCH, INSERT_BATCH, LOCK_PARENTS, READ_BATCH,
    RECORD_PARENTS, RELEASE_WAITING,
)
from ..workflow_statements import (  # noqa: F401  (statements of this vendor, declared once there)
    SQL_ADD_BATCH_MEMBERS, SQL_BATCH_ENDINGS, SQL_CLOSE_BATCH, SQL_COUNT_BATCH_ENDINGS, SQL_DEPENDENTS_OF,
    SQL_DEPENDS_ON, SQL_EDGE_ROW, SQL_FLAG_PARENTS, SQL_FORGET_EDGES, SQL_HOLD_CALLBACK,
    SQL_INSERT_EDGE_HEAD, SQL_PARENT_RESULTS, SQL_READ_CLAIMED,
)
from ..fragments import state_is
from .jobs import EXPIRES_NOW, NOTIFY_CHANNEL, NOW, NOW_PLUS_SECONDS

# The expiry of a headgate_job row that ends now (its retention class).
EXPIRES_NOW_JOB = EXPIRES_NOW.format(job="headgate_job")

SQL_LOCK_PARENTS = LOCK_PARENTS.format(lock="ORDER BY id FOR UPDATE")
SQL_RECORD_PARENTS = RECORD_PARENTS.format(json="%s::jsonb")
SQL_CANCEL_WAITING = CANCEL_WAITING.format(now=NOW, expires_now=EXPIRES_NOW_JOB)
SQL_INSERT_BATCH = INSERT_BATCH.format(now=NOW)
SQL_READ_BATCH = READ_BATCH.format(lock="FOR UPDATE")
SQL_FINISH_BATCH = FINISH_BATCH.format(now=NOW)
SQL_COMPLETE_FENCED = COMPLETE_FENCED.format(json="%s::jsonb", now=NOW, expires_now=EXPIRES_NOW_JOB)
SQL_CLAIM_BY_ID = CLAIM_BY_ID.format(now=NOW, now_plus=NOW_PLUS_SECONDS.format(seconds="%s"))
# The release, and a NOTIFY (on commit) per queue that has a job made available.
SQL_RELEASE_WAITING = f"""
WITH released AS ({RELEASE_WAITING} RETURNING state, queue)
SELECT pg_notify('{NOTIFY_CHANNEL}', queue) FROM (SELECT DISTINCT queue FROM released WHERE state = 'available') q
"""
# The success of parents (fenced, rows someone else holds skipped, locked in id order), apart
# from the acknowledgement batch, in one statement.
SQL_COMPLETE_PARENTS = f"""
WITH done AS (
    SELECT * FROM unnest(%s::uuid[], %s::bigint[], %s::text[]) AS d(id, fence, result)
), ours AS (
    SELECT j.id FROM headgate_job AS j JOIN done ON j.id = done.id AND j.fence = done.fence
    WHERE {state_is('running', of='j.state')}
    ORDER BY j.id
    FOR UPDATE OF j SKIP LOCKED
)
UPDATE headgate_job AS j
SET state = 'succeeded', result = done.result::jsonb, finished_at = now(),
    expires_at = {EXPIRES_NOW.format(job="j")}, lease_owner = NULL, lease_expires_at = NULL
FROM ours JOIN done ON done.id = ours.id
WHERE j.id = ours.id
RETURNING j.id
"""


class PostgreSQLWorkflows:
    def acknowledge_parents(self, completions):
        """Succeed parents (jobs flagged ``has_dependents``) and release their dependents, in one
        transaction; returns the accepted ids (the others were stale or locked) and whether a
        dependent was made available or cancelled."""
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(SQL_COMPLETE_PARENTS, [[str(c.job_id) for c in completions],
                                                  [c.fence for c in completions],
                                                  [c.result_json for c in completions]])
            accepted = [id_ for (id_,) in cursor.fetchall()]
            released = self.release_dependents(accepted)
        return set(accepted), bool(released)
