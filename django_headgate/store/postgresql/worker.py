"""PostgreSQL store, worker section: acknowledge and claim in one statement, lock-free renewal,
fence reads, release without spending the attempt, and the worker's session settings. The hot
statements run prepared (``hot.py``)."""

from ..records import AllQueuesExcept, ClaimedJob
from ..fragments import FENCED_UNLOCKED, HELD_BACK_INDEXED, SNOOZE, state_is
from .jobs import CLAIMED_RETURNING, EXPIRES_NOW, LEASE_SET, NOW, NOW_PLUS_SECONDS, claim_ctes

# Acknowledge and claim in ONE statement (one round trip, one commit). Every row is found by
# its primary key, one probe per listed id: the statement runs prepared, and a generic plan
# guesses 10 rows for an array, so a join of two lists would compare every row of one with every
# row of the other. `ours`: the rows to
# acknowledge still running at the claimed fence, locked in id order, skipping rows someone else
# holds (a foreign FOR UPDATE, a rescue in flight), so an acknowledgement never waits for a lock;
# `handed`: for each concurrency key among the acknowledged rows, its first held-back row (in the
# claimed queues, skipping locked ones; locked, so still held back when leased) is leased at once,
# in the slot the acknowledged row frees:
# the key's running count never changes, so no key row is locked (DESIGN §15); `picked`: ready
# rows (claim index), skipping locked ones, as many as the limit leaves after `handed`.
# Data-modifying CTEs share one snapshot and commit together; acknowledged rows are running,
# handed ones held back and claimed ones available, so no row is changed twice. Rows: (true, id,
# NULL...) per acknowledgement first, then (false, claimed job..., handed) per claim in claim
# order. A job other jobs depend on (`has_dependents`, read from the locked row's latest version)
# is not acknowledged here: it comes back as (NULL, id, NULL...), and acknowledge_and_claim
# succeeds it with its release step in a transaction of its own.
SQL_ACK_AND_CLAIM = f"""
WITH done AS (
    SELECT * FROM unnest(%s::uuid[], %s::bigint[], %s::text[]) AS d(id, fence, result)
), ours AS (
    SELECT j.id, j.has_dependents, done.result FROM done JOIN headgate_job AS j ON j.id = done.id AND j.fence = done.fence
    WHERE {state_is('running', of='j.state')}
    ORDER BY j.id
    FOR UPDATE OF j SKIP LOCKED
), acked AS (
    UPDATE headgate_job AS j
    SET state = 'succeeded', result = ours.result::jsonb, finished_at = now(),
        expires_at = {EXPIRES_NOW.format(job="j")}, lease_owner = NULL, lease_expires_at = NULL
    FROM ours
    WHERE j.id = ours.id AND ours.has_dependents IS NOT TRUE
    RETURNING j.id, j.concurrency_key
), handed AS (
    UPDATE headgate_job AS j
    SET {LEASE_SET}
    WHERE j.id = ANY(ARRAY(
        SELECT (SELECT h.id FROM headgate_job AS h
                WHERE h.concurrency_key = a.concurrency_key AND {HELD_BACK_INDEXED.format(of='h.state')} {{queue_filter}}
                ORDER BY h.priority DESC, h.run_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        FROM (SELECT DISTINCT concurrency_key FROM acked WHERE concurrency_key IS NOT NULL) AS a
        LIMIT %s
    ))
    RETURNING {CLAIMED_RETURNING}, j.priority, j.run_at
), {claim_ctes(limit="GREATEST(%s - (SELECT count(*) FROM handed), 0)")}
SELECT true AS acked, id, NULL, NULL, NULL::jsonb, NULL::jsonb, NULL::integer, NULL::integer,
       NULL::bigint, NULL::integer, NULL::double precision, NULL::timestamptz, NULL::varchar, NULL::integer,
       NULL::integer AS priority, NULL::timestamptz AS run_at, NULL::boolean AS handed
FROM acked
UNION ALL
SELECT NULL::boolean, id, NULL, NULL, NULL::jsonb, NULL::jsonb, NULL::integer, NULL::integer,
       NULL::bigint, NULL::integer, NULL::double precision, NULL::timestamptz, NULL::varchar, NULL::integer,
       NULL::integer, NULL::timestamptz, NULL::boolean
FROM ours WHERE ours.has_dependents
UNION ALL
SELECT false, claimed.*, picked.priority, picked.run_at, false FROM claimed JOIN picked USING (id)
UNION ALL
SELECT false, handed.*, true FROM handed
ORDER BY acked DESC, priority DESC, run_at
"""
SQL_ACK_AND_CLAIM_ANY_QUEUE = SQL_ACK_AND_CLAIM.format(queue_filter="")
SQL_ACK_AND_CLAIM_QUEUES = SQL_ACK_AND_CLAIM.format(queue_filter="AND queue = ANY(%s)")
SQL_ACK_AND_CLAIM_EXCEPT_QUEUES = SQL_ACK_AND_CLAIM.format(queue_filter="AND queue <> ALL(%s)")
# Renew the leases still ours, in id order, skipping rows someone else holds (never waits);
# each renewed row says whether its abort was requested (cancel() of a running job).
SQL_RENEW_UNLOCKED = f"""
WITH ours AS (
    SELECT j.id FROM headgate_job AS j
    JOIN unnest(%s::uuid[], %s::bigint[]) AS held(id, fence) ON j.id = held.id AND j.fence = held.fence
    WHERE {state_is('running', of='j.state')} AND j.lease_owner = %s
    ORDER BY j.id
    FOR UPDATE OF j SKIP LOCKED
)
UPDATE headgate_job AS j SET lease_expires_at = {NOW_PLUS_SECONDS.format(seconds="%s")}
FROM ours WHERE j.id = ours.id
RETURNING j.id, j.abort_requested_at
"""
# State and fence of some jobs, without locking (primary key).
SQL_READ_FENCES = "SELECT id, state, fence FROM headgate_job WHERE id = ANY(%s::uuid[])"
# Give leases back unspent: available again, the attempt not counted, run_at kept (fenced).
SQL_RELEASE = f"""
UPDATE headgate_job AS j
SET state = 'available', attempts = j.attempts - 1, lease_owner = NULL, lease_expires_at = NULL,
    started_at = NULL
FROM unnest(%s::uuid[], %s::bigint[]) AS held(id, fence)
WHERE j.id = held.id AND j.fence = held.fence AND {state_is('running', of='j.state')} AND j.lease_owner = %s
RETURNING j.id
"""
# Snooze one job (fenced, skipping a row someone else holds): available again after a bound
# number of seconds, attempt not spent.
SQL_SNOOZE = SNOOZE.format(run_at=NOW_PLUS_SECONDS.format(seconds="%s"), fenced=FENCED_UNLOCKED)
# The worker's plan settings, and their undoing: no bitmap or sequential scans. Every worker
# statement is an index lookup or an index-ordered claim; with statistics older than a burst of
# enqueues the planner would otherwise sort every ready row for each claim (bench/claim_plan.py,
# docs/worker.md "The claim's plan"). And one generic plan per prepared statement, made once per
# connection: left to choose, PostgreSQL re-plans the ack-and-claim at every run while it judges
# its generic plan costlier than the custom ones, and planning it with a few hundred ids costs
# more than running it (drains at concurrency 16: 1.24x faster, docs/worker.md). The generic
# plans are the ones tests/store/test_hot_plans.py checks.
SQL_SET_WORKER_PLAN = ("SELECT set_config('enable_bitmapscan', 'off', false), set_config('enable_seqscan', 'off', false), "
                       "set_config('plan_cache_mode', 'force_generic_plan', false)")
# Undo SQL_SET_WORKER_PLAN (three statements).
SQL_RESET_WORKER_PLAN = ("RESET enable_bitmapscan", "RESET enable_seqscan", "RESET plan_cache_mode")
# End the session when a transaction of it idles longer than %s ms (0 = the server's default: off).
SQL_SET_IDLE_TRANSACTION_BOUND = "SELECT set_config('idle_in_transaction_session_timeout', %s, false)"
# Undo SQL_SET_IDLE_TRANSACTION_BOUND.
SQL_RESET_IDLE_TRANSACTION_BOUND = "RESET idle_in_transaction_session_timeout"
# Label the session in pg_stat_activity, unless the host set an application_name.
SQL_NAME_SESSION = "SELECT set_config('application_name', %s, false) WHERE current_setting('application_name') = ''"


class PostgreSQLWorker:
    def acknowledge_and_claim(self, completions, worker_id, queues, limit, lease_seconds):
        params = [[str(c.job_id) for c in completions], [c.fence for c in completions],
                  [c.result_json for c in completions]]
        queue_params = [list(queues)] if queues else []
        if queues:
            sql = SQL_ACK_AND_CLAIM_EXCEPT_QUEUES if isinstance(queues, AllQueuesExcept) else SQL_ACK_AND_CLAIM_QUEUES
        else:
            sql = SQL_ACK_AND_CLAIM_ANY_QUEUE
        # handed: lease, its queues, its limit; then picked: its queues, its limit; claimed: lease
        params += [worker_id, lease_seconds, *queue_params, limit, *queue_params, limit, worker_id, lease_seconds]
        rows = self.hot_fetchall(sql, params)
        accepted = {row[1] for row in rows if row[0]}
        claimed = [ClaimedJob.from_row(row[1:14], handed_over=row[16]) for row in rows if row[0] is False]
        parents = {row[1] for row in rows if row[0] is None}
        if parents:
            acknowledged, released = self.acknowledge_parents([c for c in completions if c.job_id in parents])
            accepted |= acknowledged
            if released and len(claimed) < limit:  # as on the other vendors, the claim sees them
                claimed += self.claim_jobs(worker_id, queues, limit - len(claimed), lease_seconds)
        return accepted, claimed

    def renew_unlocked_leases(self, worker_id, leases, lease_seconds):
        if not leases:
            return {}
        ids, fences = zip(*leases)
        rows = self.hot_fetchall(SQL_RENEW_UNLOCKED, [[str(i) for i in ids], list(fences), worker_id, lease_seconds])
        return {id_: requested_at is not None for id_, requested_at in rows}

    def read_fences(self, job_ids):
        if not job_ids:
            return {}
        rows = self.hot_fetchall(SQL_READ_FENCES, [[str(i) for i in job_ids]])
        return {id_: (state, fence) for id_, state, fence in rows}

    def release_jobs(self, worker_id, leases):
        if not leases:
            return set()
        ids, fences = zip(*leases)
        with self.cursor() as cursor:
            cursor.execute(SQL_RELEASE, [[str(i) for i in ids], list(fences), worker_id])
            return {row[0] for row in cursor.fetchall()}

    # Under transaction pooling a session setting would land on whichever server connection
    # served that statement and stay there for the pool's other clients: none is set.
    def set_worker_plan(self):
        if self.transaction_pooled:
            return
        with self.cursor() as cursor:
            cursor.execute(SQL_SET_WORKER_PLAN, [])

    def reset_worker_plan(self):
        if self.transaction_pooled:
            return
        with self.cursor() as cursor:
            for statement in SQL_RESET_WORKER_PLAN:
                cursor.execute(statement, [])

    def bound_idle_transactions(self, seconds):
        if self.transaction_pooled:
            return
        with self.cursor() as cursor:
            if seconds is None:
                cursor.execute(SQL_RESET_IDLE_TRANSACTION_BOUND, [])
            else:
                cursor.execute(SQL_SET_IDLE_TRANSACTION_BOUND, [str(max(1, round(seconds * 1000)))])

    def name_session(self, name):
        if self.transaction_pooled:
            return  # PgBouncer would carry the label to the pool's other clients
        self.connection.ensure_connection()
        if self.connection.connection.info.parameter_status("application_name"):
            return  # named already (by the host's OPTIONS, or an earlier call): no round trip
        with self.cursor() as cursor:
            cursor.execute(SQL_NAME_SESSION, [name])
