-- The SQL of django-headgate's postgresql store, as it runs: generated from the code by
-- `.venv/bin/python -m tests.store.render_sql` (tests/store/render_sql.py tells how);
-- never edit by hand. Call-time pieces are filled with the examples documented there.

-- name: postgresql.jobs.SQL_APPEND_OUTPUT --
-- Append to the job's output, keeping the last %s characters (fenced).
UPDATE headgate_job SET output = right(coalesce(output, '') || %s, %s) WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE

-- name: postgresql.jobs.SQL_CANCEL --
-- Operator cancel of a job that waits: available, waiting for other jobs or held back by a limit
-- -> cancelled (primary key).
UPDATE headgate_job
SET state = 'cancelled', finished_at = now(), expires_at = now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = headgate_job.retention_class), lease_owner = NULL, lease_expires_at = NULL
WHERE id = %s AND (state IN ('available', 'waiting', 'held_back')) IS NOT FALSE RETURNING state

-- name: postgresql.jobs.SQL_CANCEL_ABORTED --
-- An attempt whose abort was requested ends cancelled (fenced; a row someone else holds is skipped).
UPDATE headgate_job SET state = 'cancelled', finished_at = now(), expires_at = now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = headgate_job.retention_class), lease_owner = NULL, lease_expires_at = NULL WHERE id = (SELECT id FROM headgate_job WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE FOR UPDATE SKIP LOCKED) AND abort_requested_at IS NOT NULL

-- name: postgresql.jobs.SQL_CLAIM --
-- Claim: the two CTEs, rows returned in claim order; {queue_filter}: see the two below.
WITH picked AS (
    SELECT id, priority, run_at FROM headgate_job
    WHERE state = 'available' AND run_at <= now() AND queue = %s
    ORDER BY priority DESC, run_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit
)
SELECT claimed.* FROM claimed JOIN picked USING (id) ORDER BY priority DESC, run_at

-- name: postgresql.jobs.SQL_CLAIM_ANY_QUEUE --
-- Claim from every queue.
WITH picked AS (
    SELECT id, priority, run_at FROM headgate_job
    WHERE state = 'available' AND run_at <= now() 
    ORDER BY priority DESC, run_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit
)
SELECT claimed.* FROM claimed JOIN picked USING (id) ORDER BY priority DESC, run_at

-- name: postgresql.jobs.SQL_CLAIM_EXCEPT_QUEUES --
-- Claim from every queue but those of one array parameter (paused or claimed under controls).
WITH picked AS (
    SELECT id, priority, run_at FROM headgate_job
    WHERE state = 'available' AND run_at <= now() AND queue <> ALL(%s)
    ORDER BY priority DESC, run_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit
)
SELECT claimed.* FROM claimed JOIN picked USING (id) ORDER BY priority DESC, run_at

-- name: postgresql.jobs.SQL_CLAIM_QUEUES --
-- Claim from the queues of one array parameter.
WITH picked AS (
    SELECT id, priority, run_at FROM headgate_job
    WHERE state = 'available' AND run_at <= now() AND queue = ANY(%s)
    ORDER BY priority DESC, run_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit
)
SELECT claimed.* FROM claimed JOIN picked USING (id) ORDER BY priority DESC, run_at

-- name: postgresql.jobs.SQL_COPY_JOBS --
-- Bulk insert (enqueue_many) by COPY, the fastest path into PostgreSQL. COPY cannot evaluate
-- now(), so the batch first reads the transaction's now() (SQL_NOW: the very value an INSERT's
-- now() would give in this transaction) and rows carry it: still the store clock.
COPY headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts, fence, unique_key, fingerprint, errors, tags, retention_class, created_at, timeout) FROM STDIN

-- name: postgresql.jobs.SQL_FAIL --
-- Fenced failure: retry after a delay, or dead when attempts are exhausted (or give_up); a row
-- someone else holds is skipped, never waited for.
UPDATE headgate_job
SET errors = errors || jsonb_build_array(%(error)s::jsonb || jsonb_build_object('at', now())), run_at = CASE WHEN (%(give_up)s OR attempts >= max_attempts) THEN run_at ELSE now() + make_interval(secs => %(delay)s) END, finished_at = CASE WHEN (%(give_up)s OR attempts >= max_attempts) THEN now() END, expires_at = CASE WHEN (%(give_up)s OR attempts >= max_attempts) THEN now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = headgate_job.retention_class) END, state = CASE WHEN (%(give_up)s OR attempts >= max_attempts) THEN 'dead' ELSE 'available' END, lease_owner = NULL, lease_expires_at = NULL
WHERE id = (SELECT id FROM headgate_job WHERE id = %(id)s AND fence = %(fence)s AND (state = 'running') IS NOT FALSE
            FOR UPDATE SKIP LOCKED)
RETURNING state

-- name: postgresql.jobs.SQL_INSERT_JOB --
-- Insert one job; NOTIFY is queued in the same transaction, so it fires only on commit.
WITH inserted AS (
    INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts, fence, unique_key, fingerprint, errors, tags, retention_class, created_at, timeout)
    VALUES (%s, %s, %s, %s, %s, %s, 'available', COALESCE(%s, now() + make_interval(secs => %s)), 0, %s, 0, %s, %s, '[]', %s, %s, now(), %s)
    ON CONFLICT (unique_key) DO NOTHING
    RETURNING created_at, run_at, queue
)
SELECT created_at, run_at, pg_notify('headgate_jobs', queue) FROM inserted

-- name: fragments.SQL_MARK_UNIQUE_UNTIL_FINISHED --
-- A job just inserted holds its unique key only until it is terminal (primary key).
UPDATE headgate_job SET unique_until = 'finished' WHERE id = %s

-- name: postgresql.jobs.SQL_NOTIFY --
-- Wake idle workers once for a COPY batch (delivered on commit).
SELECT pg_notify('headgate_jobs', '')

-- name: postgresql.jobs.SQL_NOW --
-- Store clock.
SELECT now()

-- name: fragments.SQL_RELEASE_UNIQUE_KEY --
-- Release the key of a terminal job enqueued until "finished", if it still holds that key
-- (primary key; the other conditions make a concurrent release a no-op).
UPDATE headgate_job SET unique_key = NULL WHERE id = %s AND unique_key = %s AND state IN ('succeeded', 'dead', 'cancelled') AND unique_until = 'finished'

-- name: postgresql.jobs.SQL_REQUEST_ABORT --
-- Operator cancel of a running job: request its abort (the first request's time is kept); the
-- worker reads it back through its lease renewal (primary key).
UPDATE headgate_job SET abort_requested_at = COALESCE(abort_requested_at, now())
WHERE id = %s AND (state = 'running') IS NOT FALSE RETURNING state

-- name: postgresql.jobs.SQL_RESCUE_RELEASE_BATCH --
-- Rescue step 2: release every locked lapsed row in one statement (unnest).
UPDATE headgate_job
SET errors = errors || jsonb_build_array(rescued.error::jsonb || jsonb_build_object('at', now())), run_at = CASE WHEN attempts >= max_attempts THEN now() ELSE now() END, finished_at = CASE WHEN attempts >= max_attempts THEN now() END, expires_at = CASE WHEN attempts >= max_attempts THEN now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = headgate_job.retention_class) END, state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'available' END, lease_owner = NULL, lease_expires_at = NULL
FROM unnest(%s::uuid[], %s::text[]) AS rescued(id, error)
WHERE headgate_job.id = rescued.id AND (headgate_job.state = 'running') IS NOT FALSE

-- name: postgresql.jobs.SQL_RESCUE_SELECT --
-- Rescue: lock lapsed leases (skipping rows another maintainer holds), then release them all
-- in one statement, each with its LeaseExpired entry.
SELECT id, attempts, lease_owner FROM headgate_job WHERE state = 'running' AND lease_expires_at < now() ORDER BY lease_expires_at LIMIT %s FOR UPDATE SKIP LOCKED

-- name: postgresql.jobs.SQL_RETRY --
-- Operator retry: dead/cancelled -> available now; one more attempt when they were exhausted;
-- an earlier abort request is forgotten.
UPDATE headgate_job
SET state = 'available', run_at = now(), max_attempts = GREATEST(max_attempts, attempts + 1),
    finished_at = NULL, expires_at = NULL, result = NULL, abort_requested_at = NULL
WHERE id = %s AND (state IN ('dead', 'cancelled')) IS NOT FALSE RETURNING state

-- name: postgresql.jobs.SQL_SET_PROGRESS --
-- Fenced progress and output writes.
UPDATE headgate_job SET progress = %s::jsonb WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE

-- name: postgresql.operations.SQL_LISTEN_JOB_ENDED --
-- wait(): subscribe the waiter's own session to the end of awaited jobs (migration 0010's trigger).
LISTEN headgate_job_ended

-- name: postgresql.operations.SQL_MARK_AWAITED --
-- wait(): mark a job that has not ended as awaited, so that its end sends a NOTIFY (primary key).
UPDATE headgate_job SET awaited = TRUE WHERE id = %s AND awaited IS NULL AND state NOT IN ('succeeded', 'dead', 'cancelled')

-- name: postgresql.operations.SQL_OPERATION_CANCEL --
-- Cancel the selected jobs that wait (primary key; still available, waiting for other jobs or
-- held back by a limit).
UPDATE headgate_job SET state = 'cancelled', finished_at = now(), expires_at = now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = headgate_job.retention_class), lease_owner = NULL, lease_expires_at = NULL WHERE id IN (%s, %s, %s) AND state IN ('available', 'waiting', 'held_back')

-- name: operation_fragments.SQL_OPERATION_DISCARD --
-- Delete the selected jobs that never ran (primary key; the rule is checked again).
DELETE FROM headgate_job WHERE id IN (%s, %s, %s) AND (state IN (%s, %s)) IS NOT FALSE AND attempts = 0 AND snoozes IS NULL

-- name: postgresql.operations.SQL_OPERATION_REQUEST_ABORT --
-- Request the abort of the selected running jobs (primary key; still running).
UPDATE headgate_job SET abort_requested_at = COALESCE(abort_requested_at, now()) WHERE id IN (%s, %s, %s) AND state = 'running'

-- name: operation_fragments.SQL_OPERATION_RESCHEDULE --
-- Move the selected waiting jobs to a bound time (primary key; still available).
UPDATE headgate_job SET run_at = %s WHERE id IN (%s, %s, %s) AND (state = 'available') IS NOT FALSE

-- name: postgresql.operations.SQL_OPERATION_RETRY --
-- Retry the selected dead/cancelled jobs (primary key; the state is checked again).
UPDATE headgate_job SET state = 'available', run_at = now(), max_attempts = GREATEST(max_attempts, attempts + 1),
    finished_at = NULL, expires_at = NULL, result = NULL, abort_requested_at = NULL WHERE id IN (%s, %s, %s) AND state IN (%s, %s)

-- name: postgresql.operations.SQL_OPERATION_RUN_NOW --
-- Make the selected deferred or snoozed jobs due now (primary key; still available, not yet due).
UPDATE headgate_job SET run_at = now() WHERE id IN (%s, %s, %s) AND (state = 'available') IS NOT FALSE AND run_at > now()

-- name: postgresql.operations.SQL_OPERATION_SELECT --
-- Lock a batch of matching jobs, skipping rows a worker holds (primary key order).
SELECT id FROM headgate_job WHERE state IN (%s, %s) AND attempts = 0 AND snoozes IS NULL AND id > %s AND queue = %s ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED

-- name: operation_fragments.SQL_OPERATION_SELECT_UNLOCKED --
-- Read a page of matching jobs without locking them (list, dry run).
SELECT id FROM headgate_job WHERE state IN (%s, %s) AND attempts = 0 AND snoozes IS NULL AND id > %s AND queue = %s ORDER BY id LIMIT %s

-- name: operation_fragments.SQL_READ_JOB_META --
-- current_job().meta and the consumer span: the meta of one job (primary key).
SELECT meta FROM headgate_job WHERE id = %s

-- name: postgresql.operations.SQL_SET_JOB_META --
-- enqueue(meta=): the meta of a job just inserted, in the enqueue's transaction (primary key; an
-- idempotent replay's holder keeps its own; {value}: the bound JSON, cast where the vendor needs it).
UPDATE headgate_job SET meta = %s::jsonb WHERE id = %s AND meta IS NULL AND attempts = 0

-- name: fragments.SQL_DELETE_HEARTBEAT --
-- Delete our own heartbeat row on a clean exit (primary key + instance).
DELETE FROM headgate_worker_heartbeat WHERE worker_id = %s AND instance_id = %s

-- name: postgresql.heartbeats.SQL_LISTEN --
-- Subscribe this session to the NOTIFY of enqueued jobs.
LISTEN headgate_jobs

-- name: postgresql.heartbeats.SQL_PRUNE_HEARTBEATS --
-- Stale heartbeat rows, skipping rows a renewal holds, at most LIMIT, deleted in one statement.
WITH doomed AS (
    SELECT worker_id FROM headgate_worker_heartbeat
    WHERE last_heartbeat_at < now() - make_interval(secs => %s) AND NOT (worker_id = %s AND instance_id = %s) ORDER BY last_heartbeat_at LIMIT %s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM headgate_worker_heartbeat AS h USING doomed WHERE h.worker_id = doomed.worker_id

-- name: postgresql.heartbeats.SQL_PRUNE_HEARTBEATS_ALL --
-- Stale heartbeat rows, skipping rows a renewal holds, at most LIMIT, deleted in one statement.
WITH doomed AS (
    SELECT worker_id FROM headgate_worker_heartbeat
    WHERE last_heartbeat_at < now() - make_interval(secs => %s)  ORDER BY last_heartbeat_at LIMIT %s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM headgate_worker_heartbeat AS h USING doomed WHERE h.worker_id = doomed.worker_id

-- name: postgresql.heartbeats.SQL_PRUNE_HEARTBEATS_NOT_OWN --
-- Stale heartbeat rows, skipping rows a renewal holds, at most LIMIT, deleted in one statement.
WITH doomed AS (
    SELECT worker_id FROM headgate_worker_heartbeat
    WHERE last_heartbeat_at < now() - make_interval(secs => %s) AND NOT (worker_id = %s AND instance_id = %s) ORDER BY last_heartbeat_at LIMIT %s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM headgate_worker_heartbeat AS h USING doomed WHERE h.worker_id = doomed.worker_id

-- name: postgresql.heartbeats.SQL_REGISTER_HEARTBEAT --
-- Heartbeats: register (or take over) and renew by (worker_id, instance_id).
INSERT INTO headgate_worker_heartbeat (worker_id, instance_id, hostname, pid, queues, started_at, last_heartbeat_at) VALUES (%s, %s, %s, %s, %s, now(), now()) ON CONFLICT (worker_id) DO UPDATE SET instance_id = EXCLUDED.instance_id, hostname = EXCLUDED.hostname, pid = EXCLUDED.pid, queues = EXCLUDED.queues, started_at = now(), last_heartbeat_at = now()

-- name: postgresql.heartbeats.SQL_RENEW_HEARTBEAT --
-- Renew our own heartbeat row (primary key + instance).
UPDATE headgate_worker_heartbeat SET last_heartbeat_at = now() WHERE worker_id = %s AND instance_id = %s

-- name: postgresql.heartbeats.SQL_TRY_LOCK --
-- Session-level advisory lock, taken without waiting.
SELECT pg_try_advisory_lock(%s)

-- name: postgresql.heartbeats.SQL_TRY_XACT_LOCK --
-- Transaction-level advisory lock, taken without waiting; released when the transaction ends.
SELECT pg_try_advisory_xact_lock(%s)

-- name: postgresql.heartbeats.SQL_UNLOCK --
-- Release a session-level advisory lock.
SELECT pg_advisory_unlock(%s)

-- name: postgresql.sweep.SQL_ARCHIVE_ESTIMATES --
-- Catalogue row estimates of every child; a never-analysed child (-1) with no pages is empty.
SELECT c.relname,
       CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint
            WHEN pg_relation_size(c.oid) = 0 THEN 0 END
FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
WHERE i.inhparent = 'headgate_job_archive'::regclass

-- name: postgresql.sweep.SQL_ARCHIVE_HAS_ROWS --
-- One row of a child table, if any ({table} is a quoted name from archive_layout).
SELECT EXISTS (SELECT 1 FROM "headgate_job_archive_202501")

-- name: postgresql.sweep.SQL_ARCHIVE_HAS_UNEXPIRED --
-- Any row of a child not yet expired: one probe of its expires_at_ms index.
SELECT EXISTS (SELECT 1 FROM "headgate_job_archive_202501" WHERE expires_at_ms > %s)

-- name: postgresql.sweep.SQL_LOCK_ARCHIVE_CHILD --
-- Waits for sweeps writing into the child to commit, and holds new ones until our commit.
LOCK TABLE "headgate_job_archive_202501" IN ACCESS EXCLUSIVE MODE

-- name: postgresql.sweep.SQL_NOW_MS --
-- Store clock in integer milliseconds (as evicted_at_ms).
SELECT floor(extract(epoch FROM now()) * 1000)::bigint

-- name: postgresql.sweep.SQL_SET_LOCAL_LOCK_TIMEOUT --
-- Lock wait bound of this transaction only (milliseconds).
SELECT set_config('lock_timeout', %s, true)

-- name: postgresql.sweep.SQL_SWEEP --
-- Sweep one batch in one statement: lock expired terminal rows skipping locked ones, delete
-- them, and copy those whose queue has an archive policy into the archive (routed to the
-- partition of evicted_at_ms). Data-modifying CTEs all run on one snapshot and commit together.
-- {queue_filter} is one of the two below.
WITH batch AS (
    SELECT id FROM headgate_job
    WHERE state IN ('succeeded', 'dead', 'cancelled') AND expires_at <= now() AND NOT EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (headgate_job.tags @> jsonb_build_array(headgate_legal_hold.tag::text) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job.id))) AND queue = %s
    ORDER BY expires_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
), evicted AS (
    DELETE FROM headgate_job AS j USING batch
    WHERE j.id = batch.id AND j.state IN ('succeeded', 'dead', 'cancelled')
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.errors, j.attempts, j.fingerprint,
              j.state, j.result, j.tags, j.created_at, j.finished_at
), archived AS (
    INSERT INTO headgate_job_archive (archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms)
    SELECT gen_random_uuid(), e.id, e.queue, e.task, e.args, e.kwargs, e.errors, e.attempts,
           e.fingerprint, e.state, e.result, e.tags, e.created_at, e.finished_at, floor(extract(epoch FROM now()) * 1000)::bigint,
           floor(extract(epoch FROM p.archive_retention) * 1000)::bigint
    FROM evicted AS e JOIN headgate_archive_policy AS p ON p.queue = e.queue
    RETURNING 1
)
SELECT (SELECT count(*) FROM evicted), (SELECT count(*) FROM archived)

-- name: postgresql.sweep.SQL_SWEEP_DEFAULT --
-- Every queue but those the caller sets aside (one array parameter, so one prepared statement).
WITH batch AS (
    SELECT id FROM headgate_job
    WHERE state IN ('succeeded', 'dead', 'cancelled') AND expires_at <= now() AND NOT EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (headgate_job.tags @> jsonb_build_array(headgate_legal_hold.tag::text) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job.id))) AND queue <> ALL(%s::text[])
    ORDER BY expires_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
), evicted AS (
    DELETE FROM headgate_job AS j USING batch
    WHERE j.id = batch.id AND j.state IN ('succeeded', 'dead', 'cancelled')
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.errors, j.attempts, j.fingerprint,
              j.state, j.result, j.tags, j.created_at, j.finished_at
), archived AS (
    INSERT INTO headgate_job_archive (archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms)
    SELECT gen_random_uuid(), e.id, e.queue, e.task, e.args, e.kwargs, e.errors, e.attempts,
           e.fingerprint, e.state, e.result, e.tags, e.created_at, e.finished_at, floor(extract(epoch FROM now()) * 1000)::bigint,
           floor(extract(epoch FROM p.archive_retention) * 1000)::bigint
    FROM evicted AS e JOIN headgate_archive_policy AS p ON p.queue = e.queue
    RETURNING 1
)
SELECT (SELECT count(*) FROM evicted), (SELECT count(*) FROM archived)

-- name: postgresql.sweep.SQL_SWEEP_QUEUE --
-- One queue swept on its own (its cleanup_batch_limit).
WITH batch AS (
    SELECT id FROM headgate_job
    WHERE state IN ('succeeded', 'dead', 'cancelled') AND expires_at <= now() AND NOT EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (headgate_job.tags @> jsonb_build_array(headgate_legal_hold.tag::text) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job.id))) AND queue = %s
    ORDER BY expires_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
), evicted AS (
    DELETE FROM headgate_job AS j USING batch
    WHERE j.id = batch.id AND j.state IN ('succeeded', 'dead', 'cancelled')
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.errors, j.attempts, j.fingerprint,
              j.state, j.result, j.tags, j.created_at, j.finished_at
), archived AS (
    INSERT INTO headgate_job_archive (archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms)
    SELECT gen_random_uuid(), e.id, e.queue, e.task, e.args, e.kwargs, e.errors, e.attempts,
           e.fingerprint, e.state, e.result, e.tags, e.created_at, e.finished_at, floor(extract(epoch FROM now()) * 1000)::bigint,
           floor(extract(epoch FROM p.archive_retention) * 1000)::bigint
    FROM evicted AS e JOIN headgate_archive_policy AS p ON p.queue = e.queue
    RETURNING 1
)
SELECT (SELECT count(*) FROM evicted), (SELECT count(*) FROM archived)

-- name: postgresql.sweep.SQL_TRUNCATE_ARCHIVE_PARTITION --
-- Prune a month: empty its child table at once (under SQL_LOCK_ARCHIVE_CHILD).
TRUNCATE TABLE "headgate_job_archive_202501"

-- name: postgresql.worker.SQL_ACK_AND_CLAIM --
-- Acknowledge and claim in ONE statement (one round trip, one commit). Every row is found by
-- its primary key, one probe per listed id: the statement runs prepared, and a generic plan
-- guesses 10 rows for an array, so a join of two lists would compare every row of one with every
-- row of the other. `ours`: the rows to
-- acknowledge still running at the claimed fence, locked in id order, skipping rows someone else
-- holds (a foreign FOR UPDATE, a rescue in flight), so an acknowledgement never waits for a lock;
-- `handed`: for each concurrency key among the acknowledged rows, its first held-back row (in the
-- claimed queues, skipping locked ones; locked, so still held back when leased) is leased at once,
-- in the slot the acknowledged row frees:
-- the key's running count never changes, so no key row is locked (DESIGN §15); `picked`: ready
-- rows (claim index), skipping locked ones, as many as the limit leaves after `handed`.
-- Data-modifying CTEs share one snapshot and commit together; acknowledged rows are running,
-- handed ones held back and claimed ones available, so no row is changed twice. Rows: (true, id,
-- NULL...) per acknowledgement first, then (false, claimed job..., handed) per claim in claim
-- order. A job other jobs depend on (`has_dependents`, read from the locked row's latest version)
-- is not acknowledged here: it comes back as (NULL, id, NULL...), and acknowledge_and_claim
-- succeeds it with its release step in a transaction of its own.
WITH done AS (
    SELECT * FROM unnest(%s::uuid[], %s::bigint[], %s::text[]) AS d(id, fence, result)
), ours AS (
    SELECT j.id, j.has_dependents, done.result FROM done JOIN headgate_job AS j ON j.id = done.id AND j.fence = done.fence
    WHERE (j.state = 'running') IS NOT FALSE
    ORDER BY j.id
    FOR UPDATE OF j SKIP LOCKED
), acked AS (
    UPDATE headgate_job AS j
    SET state = 'succeeded', result = ours.result::jsonb, finished_at = now(),
        expires_at = now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = j.retention_class), lease_owner = NULL, lease_expires_at = NULL
    FROM ours
    WHERE j.id = ours.id AND ours.has_dependents IS NOT TRUE
    RETURNING j.id, j.concurrency_key
), handed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(
        SELECT (SELECT h.id FROM headgate_job AS h
                WHERE h.concurrency_key = a.concurrency_key AND (h.state = 'held_back') IS TRUE AND queue = %s
                ORDER BY h.priority DESC, h.run_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        FROM (SELECT DISTINCT concurrency_key FROM acked WHERE concurrency_key IS NOT NULL) AS a
        LIMIT %s
    ))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit, j.priority, j.run_at
), picked AS (
    SELECT id, priority, run_at FROM headgate_job
    WHERE state = 'available' AND run_at <= now() AND queue = %s
    ORDER BY priority DESC, run_at
    LIMIT GREATEST(%s - (SELECT count(*) FROM handed), 0)
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit
)
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

-- name: postgresql.worker.SQL_ACK_AND_CLAIM_ANY_QUEUE --
-- Acknowledge and claim in ONE statement (one round trip, one commit). Every row is found by
-- its primary key, one probe per listed id: the statement runs prepared, and a generic plan
-- guesses 10 rows for an array, so a join of two lists would compare every row of one with every
-- row of the other. `ours`: the rows to
-- acknowledge still running at the claimed fence, locked in id order, skipping rows someone else
-- holds (a foreign FOR UPDATE, a rescue in flight), so an acknowledgement never waits for a lock;
-- `handed`: for each concurrency key among the acknowledged rows, its first held-back row (in the
-- claimed queues, skipping locked ones; locked, so still held back when leased) is leased at once,
-- in the slot the acknowledged row frees:
-- the key's running count never changes, so no key row is locked (DESIGN §15); `picked`: ready
-- rows (claim index), skipping locked ones, as many as the limit leaves after `handed`.
-- Data-modifying CTEs share one snapshot and commit together; acknowledged rows are running,
-- handed ones held back and claimed ones available, so no row is changed twice. Rows: (true, id,
-- NULL...) per acknowledgement first, then (false, claimed job..., handed) per claim in claim
-- order. A job other jobs depend on (`has_dependents`, read from the locked row's latest version)
-- is not acknowledged here: it comes back as (NULL, id, NULL...), and acknowledge_and_claim
-- succeeds it with its release step in a transaction of its own.
WITH done AS (
    SELECT * FROM unnest(%s::uuid[], %s::bigint[], %s::text[]) AS d(id, fence, result)
), ours AS (
    SELECT j.id, j.has_dependents, done.result FROM done JOIN headgate_job AS j ON j.id = done.id AND j.fence = done.fence
    WHERE (j.state = 'running') IS NOT FALSE
    ORDER BY j.id
    FOR UPDATE OF j SKIP LOCKED
), acked AS (
    UPDATE headgate_job AS j
    SET state = 'succeeded', result = ours.result::jsonb, finished_at = now(),
        expires_at = now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = j.retention_class), lease_owner = NULL, lease_expires_at = NULL
    FROM ours
    WHERE j.id = ours.id AND ours.has_dependents IS NOT TRUE
    RETURNING j.id, j.concurrency_key
), handed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(
        SELECT (SELECT h.id FROM headgate_job AS h
                WHERE h.concurrency_key = a.concurrency_key AND (h.state = 'held_back') IS TRUE 
                ORDER BY h.priority DESC, h.run_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        FROM (SELECT DISTINCT concurrency_key FROM acked WHERE concurrency_key IS NOT NULL) AS a
        LIMIT %s
    ))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit, j.priority, j.run_at
), picked AS (
    SELECT id, priority, run_at FROM headgate_job
    WHERE state = 'available' AND run_at <= now() 
    ORDER BY priority DESC, run_at
    LIMIT GREATEST(%s - (SELECT count(*) FROM handed), 0)
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit
)
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

-- name: postgresql.worker.SQL_ACK_AND_CLAIM_EXCEPT_QUEUES --
-- Acknowledge and claim in ONE statement (one round trip, one commit). Every row is found by
-- its primary key, one probe per listed id: the statement runs prepared, and a generic plan
-- guesses 10 rows for an array, so a join of two lists would compare every row of one with every
-- row of the other. `ours`: the rows to
-- acknowledge still running at the claimed fence, locked in id order, skipping rows someone else
-- holds (a foreign FOR UPDATE, a rescue in flight), so an acknowledgement never waits for a lock;
-- `handed`: for each concurrency key among the acknowledged rows, its first held-back row (in the
-- claimed queues, skipping locked ones; locked, so still held back when leased) is leased at once,
-- in the slot the acknowledged row frees:
-- the key's running count never changes, so no key row is locked (DESIGN §15); `picked`: ready
-- rows (claim index), skipping locked ones, as many as the limit leaves after `handed`.
-- Data-modifying CTEs share one snapshot and commit together; acknowledged rows are running,
-- handed ones held back and claimed ones available, so no row is changed twice. Rows: (true, id,
-- NULL...) per acknowledgement first, then (false, claimed job..., handed) per claim in claim
-- order. A job other jobs depend on (`has_dependents`, read from the locked row's latest version)
-- is not acknowledged here: it comes back as (NULL, id, NULL...), and acknowledge_and_claim
-- succeeds it with its release step in a transaction of its own.
WITH done AS (
    SELECT * FROM unnest(%s::uuid[], %s::bigint[], %s::text[]) AS d(id, fence, result)
), ours AS (
    SELECT j.id, j.has_dependents, done.result FROM done JOIN headgate_job AS j ON j.id = done.id AND j.fence = done.fence
    WHERE (j.state = 'running') IS NOT FALSE
    ORDER BY j.id
    FOR UPDATE OF j SKIP LOCKED
), acked AS (
    UPDATE headgate_job AS j
    SET state = 'succeeded', result = ours.result::jsonb, finished_at = now(),
        expires_at = now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = j.retention_class), lease_owner = NULL, lease_expires_at = NULL
    FROM ours
    WHERE j.id = ours.id AND ours.has_dependents IS NOT TRUE
    RETURNING j.id, j.concurrency_key
), handed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(
        SELECT (SELECT h.id FROM headgate_job AS h
                WHERE h.concurrency_key = a.concurrency_key AND (h.state = 'held_back') IS TRUE AND queue <> ALL(%s)
                ORDER BY h.priority DESC, h.run_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        FROM (SELECT DISTINCT concurrency_key FROM acked WHERE concurrency_key IS NOT NULL) AS a
        LIMIT %s
    ))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit, j.priority, j.run_at
), picked AS (
    SELECT id, priority, run_at FROM headgate_job
    WHERE state = 'available' AND run_at <= now() AND queue <> ALL(%s)
    ORDER BY priority DESC, run_at
    LIMIT GREATEST(%s - (SELECT count(*) FROM handed), 0)
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit
)
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

-- name: postgresql.worker.SQL_ACK_AND_CLAIM_QUEUES --
-- Acknowledge and claim in ONE statement (one round trip, one commit). Every row is found by
-- its primary key, one probe per listed id: the statement runs prepared, and a generic plan
-- guesses 10 rows for an array, so a join of two lists would compare every row of one with every
-- row of the other. `ours`: the rows to
-- acknowledge still running at the claimed fence, locked in id order, skipping rows someone else
-- holds (a foreign FOR UPDATE, a rescue in flight), so an acknowledgement never waits for a lock;
-- `handed`: for each concurrency key among the acknowledged rows, its first held-back row (in the
-- claimed queues, skipping locked ones; locked, so still held back when leased) is leased at once,
-- in the slot the acknowledged row frees:
-- the key's running count never changes, so no key row is locked (DESIGN §15); `picked`: ready
-- rows (claim index), skipping locked ones, as many as the limit leaves after `handed`.
-- Data-modifying CTEs share one snapshot and commit together; acknowledged rows are running,
-- handed ones held back and claimed ones available, so no row is changed twice. Rows: (true, id,
-- NULL...) per acknowledgement first, then (false, claimed job..., handed) per claim in claim
-- order. A job other jobs depend on (`has_dependents`, read from the locked row's latest version)
-- is not acknowledged here: it comes back as (NULL, id, NULL...), and acknowledge_and_claim
-- succeeds it with its release step in a transaction of its own.
WITH done AS (
    SELECT * FROM unnest(%s::uuid[], %s::bigint[], %s::text[]) AS d(id, fence, result)
), ours AS (
    SELECT j.id, j.has_dependents, done.result FROM done JOIN headgate_job AS j ON j.id = done.id AND j.fence = done.fence
    WHERE (j.state = 'running') IS NOT FALSE
    ORDER BY j.id
    FOR UPDATE OF j SKIP LOCKED
), acked AS (
    UPDATE headgate_job AS j
    SET state = 'succeeded', result = ours.result::jsonb, finished_at = now(),
        expires_at = now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = j.retention_class), lease_owner = NULL, lease_expires_at = NULL
    FROM ours
    WHERE j.id = ours.id AND ours.has_dependents IS NOT TRUE
    RETURNING j.id, j.concurrency_key
), handed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(
        SELECT (SELECT h.id FROM headgate_job AS h
                WHERE h.concurrency_key = a.concurrency_key AND (h.state = 'held_back') IS TRUE AND queue = ANY(%s)
                ORDER BY h.priority DESC, h.run_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        FROM (SELECT DISTINCT concurrency_key FROM acked WHERE concurrency_key IS NOT NULL) AS a
        LIMIT %s
    ))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit, j.priority, j.run_at
), picked AS (
    SELECT id, priority, run_at FROM headgate_job
    WHERE state = 'available' AND run_at <= now() AND queue = ANY(%s)
    ORDER BY priority DESC, run_at
    LIMIT GREATEST(%s - (SELECT count(*) FROM handed), 0)
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE headgate_job AS j
    SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now()
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.attempts, j.max_attempts, j.fence, j.snoozes, j.timeout, j.abort_requested_at, j.concurrency_key, j.concurrency_limit
)
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

-- name: postgresql.worker.SQL_NAME_SESSION --
-- Label the session in pg_stat_activity, unless the host set an application_name.
SELECT set_config('application_name', %s, false) WHERE current_setting('application_name') = ''

-- name: postgresql.worker.SQL_READ_FENCES --
-- State and fence of some jobs, without locking (primary key).
SELECT id, state, fence FROM headgate_job WHERE id = ANY(%s::uuid[])

-- name: postgresql.worker.SQL_RELEASE --
-- Give leases back unspent: available again, the attempt not counted, run_at kept (fenced).
UPDATE headgate_job AS j
SET state = 'available', attempts = j.attempts - 1, lease_owner = NULL, lease_expires_at = NULL,
    started_at = NULL
FROM unnest(%s::uuid[], %s::bigint[]) AS held(id, fence)
WHERE j.id = held.id AND j.fence = held.fence AND (j.state = 'running') IS NOT FALSE AND j.lease_owner = %s
RETURNING j.id

-- name: postgresql.worker.SQL_RENEW_UNLOCKED --
-- Renew the leases still ours, in id order, skipping rows someone else holds (never waits);
-- each renewed row says whether its abort was requested (cancel() of a running job).
WITH ours AS (
    SELECT j.id FROM headgate_job AS j
    JOIN unnest(%s::uuid[], %s::bigint[]) AS held(id, fence) ON j.id = held.id AND j.fence = held.fence
    WHERE (j.state = 'running') IS NOT FALSE AND j.lease_owner = %s
    ORDER BY j.id
    FOR UPDATE OF j SKIP LOCKED
)
UPDATE headgate_job AS j SET lease_expires_at = now() + make_interval(secs => %s)
FROM ours WHERE j.id = ours.id
RETURNING j.id, j.abort_requested_at

-- name: postgresql.worker.SQL_RESET_IDLE_TRANSACTION_BOUND --
-- Undo SQL_SET_IDLE_TRANSACTION_BOUND.
RESET idle_in_transaction_session_timeout

-- name: postgresql.worker.SQL_RESET_WORKER_PLAN --
-- Undo SQL_SET_WORKER_PLAN (three statements).
RESET enable_bitmapscan
RESET enable_seqscan
RESET plan_cache_mode

-- name: postgresql.worker.SQL_SET_IDLE_TRANSACTION_BOUND --
-- End the session when a transaction of it idles longer than %s ms (0 = the server's default: off).
SELECT set_config('idle_in_transaction_session_timeout', %s, false)

-- name: postgresql.worker.SQL_SET_WORKER_PLAN --
-- The worker's plan settings, and their undoing: no bitmap or sequential scans. Every worker
-- statement is an index lookup or an index-ordered claim; with statistics older than a burst of
-- enqueues the planner would otherwise sort every ready row for each claim (bench/claim_plan.py,
-- docs/worker.md "The claim's plan"). And one generic plan per prepared statement, made once per
-- connection: left to choose, PostgreSQL re-plans the ack-and-claim at every run while it judges
-- its generic plan costlier than the custom ones, and planning it with a few hundred ids costs
-- more than running it (drains at concurrency 16: 1.24x faster, docs/worker.md). The generic
-- plans are the ones tests/store/test_hot_plans.py checks.
SELECT set_config('enable_bitmapscan', 'off', false), set_config('enable_seqscan', 'off', false), set_config('plan_cache_mode', 'force_generic_plan', false)

-- name: postgresql.worker.SQL_SNOOZE --
-- Snooze one job (fenced, skipping a row someone else holds): available again after a bound
-- number of seconds, attempt not spent.
UPDATE headgate_job SET state = 'available', attempts = attempts - 1, run_at = now() + make_interval(secs => %s), snoozes = COALESCE(snoozes, 0) + 1, started_at = NULL, lease_owner = NULL, lease_expires_at = NULL WHERE id = (SELECT id FROM headgate_job WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE FOR UPDATE SKIP LOCKED)

-- name: flow_fragments.SQL_COUNT_RUNNING_IN_QUEUE --
-- Jobs of one queue holding a lease (headgate_job_claim_idx).
SELECT COUNT(*) FROM headgate_job WHERE state = 'running' AND queue = %s

-- name: flow_fragments.SQL_COUNT_RUNNING_OF_KEYS --
-- Running rows of some keys, per key (headgate_job_flow_key_idx; {keys}: placeholders).
SELECT concurrency_key, COUNT(*) FROM headgate_job WHERE concurrency_key IN (%s, %s) AND state = 'running' GROUP BY concurrency_key

-- name: flow_fragments.SQL_DEFER_TO_WINDOW --
-- A claimed job past its task's rate waits for the next window (fenced): available again at the
-- bound time, no lease, its attempt not counted.
UPDATE headgate_job SET state = 'available', run_at = %s, attempts = attempts - 1, lease_owner = NULL, lease_expires_at = NULL, started_at = NULL WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE

-- name: postgresql.flow.SQL_EXISTING_FLOW_KEYS --
-- The lock rows among some keys, read without locking (primary key; {keys}: placeholders).
SELECT "key" FROM headgate_flow_key WHERE "key" IN (%s, %s)

-- name: flow_fragments.SQL_HELD_BACK_KEYS --
-- Keys of the first held-back rows in claim order (headgate_job_claim_any_idx), at most %s rows.
SELECT concurrency_key FROM headgate_job WHERE state = 'held_back' ORDER BY priority DESC, run_at LIMIT %s

-- name: flow_fragments.SQL_HELD_BACK_OF_KEY --
-- Held-back rows of one key in claim order, at most %s (headgate_job_flow_key_idx); a release
-- joins one per key with UNION ALL (a derived table: each keeps its own ORDER BY and LIMIT).
SELECT * FROM (SELECT id, concurrency_key, concurrency_limit FROM headgate_job WHERE concurrency_key = %s AND state = 'held_back' ORDER BY priority DESC, run_at LIMIT %s) AS held

-- name: postgresql.flow.SQL_HELD_BACK_OF_KEYS --
-- The first held-back rows of each key, at most so many per key, in claim order: one
-- index-ordered read per (key, rows) pair of the two arrays (headgate_job_held_back_idx, whose
-- predicate the state test repeats word for word, so no other index can serve it). One plan
-- whatever the number of keys, where a UNION ALL of one read per key is planned read by read.
SELECT held.id, held.concurrency_key, held.concurrency_limit
FROM unnest(%s::text[], %s::integer[]) AS k(concurrency_key, rows_of_key)
CROSS JOIN LATERAL (
    SELECT id, concurrency_key, concurrency_limit FROM headgate_job AS j
    WHERE j.concurrency_key = k.concurrency_key AND (j.state = 'held_back') IS TRUE
    ORDER BY priority DESC, run_at
    LIMIT k.rows_of_key
) AS held

-- name: flow_fragments.SQL_HOLD_BACK_MANY --
-- Claimed jobs over their key's limit are held back (primary key; only while still leased to the
-- worker, %s after the ids): no lease, their attempt not counted.
UPDATE headgate_job SET state = 'held_back', attempts = attempts - 1, lease_owner = NULL, lease_expires_at = NULL, started_at = NULL WHERE id IN (%s, %s, %s) AND (state = 'running') IS NOT FALSE AND lease_owner = %s

-- name: postgresql.flow.SQL_INSERT_FLOW_KEY --
-- A key's lock row, inserted once (a concurrent insert of the same key waits, then does nothing).
INSERT INTO headgate_flow_key ("key", window_count) VALUES (%s, 0) ON CONFLICT DO NOTHING

-- name: flow_fragments.SQL_KEYS_OF_JOBS --
-- The distinct concurrency keys of some jobs (primary key; {ids}: placeholders).
SELECT DISTINCT concurrency_key FROM headgate_job WHERE id IN (%s, %s, %s) AND concurrency_key IS NOT NULL

-- name: postgresql.flow.SQL_LOCK_FLOW_KEY --
-- Lock a key's row until the transaction ends: claims and releases of one key take turns.
SELECT "key" FROM headgate_flow_key WHERE "key" = %s FOR UPDATE

-- name: postgresql.flow.SQL_LOCK_FLOW_KEYS --
-- The same for several keys, locked in key order (rows are locked as the sort returns them).
SELECT "key" FROM headgate_flow_key WHERE "key" IN (%s, %s) ORDER BY "key" FOR UPDATE

-- name: postgresql.flow.SQL_LOCK_QUEUE_CONTROL --
-- Lock a queue's control row until the transaction ends: controlled claims of a queue take turns.
SELECT queue FROM headgate_queue_control WHERE queue = %s FOR UPDATE

-- name: flow_fragments.SQL_MAKE_AVAILABLE --
-- Held-back rows become claimable again, run_at kept (primary key; {ids}: placeholders).
UPDATE headgate_job SET state = 'available' WHERE id IN (%s, %s, %s) AND (state = 'held_back') IS NOT FALSE

-- name: postgresql.flow.SQL_READ_FLOW_WINDOW --
-- A rate scope's window (primary key; {key}: the vendor's quoting).
SELECT window_started_at, window_count FROM headgate_flow_key WHERE "key" = %s

-- name: flow_fragments.SQL_READ_QUEUE_CONTROL --
-- A queue's controls (primary key), read after SQL_LOCK_QUEUE_CONTROL in the same transaction.
SELECT paused, concurrency, rate_limit, window_started_at, window_count FROM headgate_queue_control WHERE queue = %s

-- name: flow_fragments.SQL_SET_CONCURRENCY --
-- Store a job's concurrency key and limit, just after its insert (primary key).
UPDATE headgate_job SET concurrency_key = %s, concurrency_limit = %s WHERE id = %s

-- name: postgresql.flow.SQL_SET_FLOW_WINDOW --
-- A rate scope's window after an admission (primary key).
UPDATE headgate_flow_key SET window_started_at = %s, window_count = %s WHERE "key" = %s

-- name: flow_fragments.SQL_SET_RATE_WINDOW --
-- The queue's rate window after a claim (primary key).
UPDATE headgate_queue_control SET window_started_at = %s, window_count = %s WHERE queue = %s

-- name: workflow_statements.SQL_ADD_BATCH_MEMBERS --
-- Members of a batch (primary key): flagged, so that their end runs the release step.
UPDATE headgate_job SET batch_id = %s, has_dependents = TRUE WHERE id IN (%s, %s, %s)

-- name: workflow_statements.SQL_BATCH_ENDINGS --
-- The ended batch members among some jobs, by batch and end state (primary key).
SELECT batch_id, state, COUNT(*) FROM headgate_job
WHERE id IN (%s, %s, %s) AND batch_id IS NOT NULL AND (state IN ('succeeded', 'dead', 'cancelled')) IS NOT FALSE
GROUP BY batch_id, state

-- name: postgresql.workflows.SQL_CANCEL_WAITING --
-- A waiting job whose parent failed ends cancelled (primary key).
UPDATE headgate_job SET state = 'cancelled', waiting_for = 0, finished_at = now(), expires_at = now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = headgate_job.retention_class) WHERE id = %s AND (state = 'waiting') IS NOT FALSE

-- name: postgresql.workflows.SQL_CLAIM_BY_ID --
-- Lease one available job by id, due or not (the testing kit's run_job; primary key).
UPDATE headgate_job SET state = 'running', attempts = attempts + 1, fence = fence + 1, lease_owner = %s, lease_expires_at = now() + make_interval(secs => %s), started_at = now() WHERE id = %s AND (state = 'available') IS NOT FALSE

-- name: workflow_statements.SQL_CLOSE_BATCH --
-- Close a batch: its total and callbacks (primary key).
UPDATE headgate_batch SET total = %s, on_success_id = %s, on_finish_id = %s, on_dead_id = %s WHERE id = %s

-- name: postgresql.workflows.SQL_COMPLETE_FENCED --
-- The fenced success of a job inside its task's own transaction (current_job().atomic()):
-- waits for a row lock (a renewal's, briefly) rather than skipping it.
UPDATE headgate_job SET state = 'succeeded', result = %s::jsonb, finished_at = now(), expires_at = now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = headgate_job.retention_class), lease_owner = NULL, lease_expires_at = NULL WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE

-- name: postgresql.workflows.SQL_COMPLETE_PARENTS --
-- The success of parents (fenced, rows someone else holds skipped, locked in id order), apart
-- from the acknowledgement batch, in one statement.
WITH done AS (
    SELECT * FROM unnest(%s::uuid[], %s::bigint[], %s::text[]) AS d(id, fence, result)
), ours AS (
    SELECT j.id FROM headgate_job AS j JOIN done ON j.id = done.id AND j.fence = done.fence
    WHERE (j.state = 'running') IS NOT FALSE
    ORDER BY j.id
    FOR UPDATE OF j SKIP LOCKED
)
UPDATE headgate_job AS j
SET state = 'succeeded', result = done.result::jsonb, finished_at = now(),
    expires_at = now() + (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.key = j.retention_class), lease_owner = NULL, lease_expires_at = NULL
FROM ours JOIN done ON done.id = ours.id
WHERE j.id = ours.id
RETURNING j.id

-- name: workflow_statements.SQL_COUNT_BATCH_ENDINGS --
-- Count a batch's ended members (primary key; the row lock orders the members' transactions).
UPDATE headgate_batch SET succeeded = succeeded + %s, dead = dead + %s, cancelled = cancelled + %s WHERE id = %s

-- name: workflow_statements.SQL_DEPENDENTS_OF --
-- The waiting dependents of parents that are terminal (edge index, then primary keys).
SELECT d.child_id, p.state, c.on_parent_failure
FROM headgate_job_dependency d
JOIN headgate_job p ON p.id = d.parent_id
JOIN headgate_job c ON c.id = d.child_id
WHERE d.parent_id IN (%s, %s, %s) AND p.state IN ('succeeded', 'dead', 'cancelled') AND c.state = 'waiting'
ORDER BY d.child_id

-- name: workflow_statements.SQL_DEPENDS_ON --
-- A dependent job's parent ids (primary key).
SELECT depends_on FROM headgate_job WHERE id = %s

-- name: workflow_statements.SQL_EDGE_ROW --
-- One edge's values (parent, child).
(%s, %s)

-- name: postgresql.workflows.SQL_FINISH_BATCH --
-- Mark a batch finished, once (primary key).
UPDATE headgate_batch SET finished_at = now() WHERE id = %s AND finished_at IS NULL

-- name: workflow_statements.SQL_FLAG_PARENTS --
-- Flag the parents not yet ended: their end runs the release step (primary key).
UPDATE headgate_job SET has_dependents = TRUE WHERE id IN (%s, %s, %s)

-- name: workflow_statements.SQL_FORGET_EDGES --
-- Delete the edges of jobs that no longer wait ({ids} twice: the same ids).
DELETE FROM headgate_job_dependency WHERE child_id IN (%s, %s, %s) AND child_id NOT IN (SELECT id FROM headgate_job WHERE id IN (%s, %s, %s) AND (state = 'waiting') IS NOT FALSE)

-- name: workflow_statements.SQL_HOLD_CALLBACK --
-- A callback job waits for its batch's end (primary key).
UPDATE headgate_job SET state = 'waiting', waiting_for = 1 WHERE id = %s AND (state = 'available') IS NOT FALSE

-- name: postgresql.workflows.SQL_INSERT_BATCH --
-- An open batch: no total until its block closes.
INSERT INTO headgate_batch (id, total, succeeded, dead, cancelled, created_at) VALUES (%s, NULL, 0, 0, 0, now())

-- name: workflow_statements.SQL_INSERT_EDGE_HEAD --
-- One edge per pending parent: the head, then one SQL_EDGE_ROW per edge.
INSERT INTO headgate_job_dependency (parent_id, child_id) VALUES

-- name: postgresql.workflows.SQL_LOCK_PARENTS --
-- Lock a dependent job's parents at enqueue ({ids}: one %s per parent; {lock}: FOR UPDATE where
-- the vendor has row locks), reading their states (primary key).
SELECT id, state FROM headgate_job WHERE id IN (%s, %s, %s) ORDER BY id FOR UPDATE

-- name: workflow_statements.SQL_PARENT_RESULTS --
-- The results of a job's parents (primary key).
SELECT id, result FROM headgate_job WHERE id IN (%s, %s, %s)

-- name: postgresql.workflows.SQL_READ_BATCH --
-- A batch's counts and callbacks ({lock}: FOR UPDATE where the vendor has row locks, so that the
-- read sees the latest committed counts).
SELECT total, succeeded, dead, cancelled, on_success_id, on_finish_id, on_dead_id FROM headgate_batch WHERE id = %s FOR UPDATE

-- name: workflow_statements.SQL_READ_CLAIMED --
-- The claimed columns of one job (primary key).
SELECT id, queue, task, args, kwargs, attempts, max_attempts, fence, snoozes, timeout, abort_requested_at, concurrency_key, concurrency_limit FROM headgate_job WHERE id = %s

-- name: postgresql.workflows.SQL_RECORD_PARENTS --
-- A dependent job just inserted: waiting (or available when no parent is pending), its parents
-- and its policy (primary key).
UPDATE headgate_job SET state = %s, waiting_for = %s, on_parent_failure = %s, depends_on = %s::jsonb WHERE id = %s

-- name: postgresql.workflows.SQL_RELEASE_WAITING --
-- The release, and a NOTIFY (on commit) per queue that has a job made available.
WITH released AS (UPDATE headgate_job SET state = CASE WHEN waiting_for <= %s THEN 'available' ELSE state END, waiting_for = waiting_for - %s WHERE (state = 'waiting') IS NOT FALSE AND id IN (%s, %s, %s) RETURNING state, queue)
SELECT pg_notify('headgate_jobs', queue) FROM (SELECT DISTINCT queue FROM released WHERE state = 'available') q

-- name: postgresql.compliance.SQL_BLANK_ARCHIVE --
-- Blank one archived row's payloads (primary key, so one partition).
UPDATE headgate_job_archive SET args = %s::jsonb, kwargs = %s::jsonb, result = NULL, errors = %s::jsonb WHERE archive_id = %s AND evicted_at_ms = %s

-- name: postgresql.compliance.SQL_BLANK_HELD --
-- Blank one held row's payloads (primary key).
UPDATE headgate_job_archive_held SET args = %s::jsonb, kwargs = %s::jsonb, result = NULL, errors = %s::jsonb WHERE archive_id = %s AND evicted_at_ms = %s

-- name: postgresql.compliance.SQL_BLANK_JOB --
-- Blank one hot row's payloads (primary key).
UPDATE headgate_job SET args = %s::jsonb, kwargs = %s::jsonb, result = NULL, output = NULL, progress = NULL, errors = %s::jsonb WHERE id = %s

-- name: postgresql.compliance.SQL_COUNT_HELD_ARCHIVE_ROWS --
-- Held rows of one archive child table ({table}: a quoted name from archive_layout).
SELECT count(*) FROM "headgate_job_archive_202501" AS archived WHERE EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (archived.tags @> jsonb_build_array(headgate_legal_hold.tag::text) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = archived.job_id)))

-- name: postgresql.compliance.SQL_COUNT_HELD_TAGGED --
-- Rows carrying the tag under a legal hold, in the three tables.
SELECT (SELECT count(*) FROM headgate_job WHERE headgate_job.tags @> jsonb_build_array(%s::text) AND EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (headgate_job.tags @> jsonb_build_array(headgate_legal_hold.tag::text) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job.id)))) + (SELECT count(*) FROM headgate_job_archive WHERE headgate_job_archive.tags @> jsonb_build_array(%s::text) AND EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (headgate_job_archive.tags @> jsonb_build_array(headgate_legal_hold.tag::text) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job_archive.job_id)))) + (SELECT count(*) FROM headgate_job_archive_held WHERE headgate_job_archive_held.tags @> jsonb_build_array(%s::text) AND EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (headgate_job_archive_held.tags @> jsonb_build_array(headgate_legal_hold.tag::text) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job_archive_held.job_id))))

-- name: holds.SQL_DELETE_HELD_ROWS --
-- Delete held-table rows by primary key.
DELETE FROM headgate_job_archive_held WHERE archive_id IN (%s, %s, %s)

-- name: postgresql.compliance.SQL_MOVE_HELD_ARCHIVE_ROWS --
-- Copy the held rows of one child into the held table (before its TRUNCATE, same transaction);
-- a row copied by an interrupted earlier prune is left as it is.
INSERT INTO headgate_job_archive_held (archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms)
SELECT archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms FROM "headgate_job_archive_202501" AS archived WHERE EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (archived.tags @> jsonb_build_array(headgate_legal_hold.tag::text) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = archived.job_id)))
ON CONFLICT (archive_id) DO NOTHING

-- name: erasure.SQL_SELECT_ARCHIVED_COPIES --
-- Archived copies of listed jobs swept before their erasure (headgate_archive_job_idx).
SELECT archive_id, evicted_at_ms, errors FROM headgate_job_archive WHERE job_id IN (%s, %s, %s)

-- name: postgresql.compliance.SQL_SELECT_ARCHIVE_MONTH_PAYLOADS --
-- One month's archived rows with their payloads, after a (evicted_at_ms, archive_id) cursor.
SELECT archive_id, evicted_at_ms, args, kwargs, result, errors FROM headgate_job_archive WHERE evicted_at_ms >= %s AND evicted_at_ms < %s AND (evicted_at_ms > %s OR (evicted_at_ms = %s AND archive_id > %s)) ORDER BY evicted_at_ms, archive_id LIMIT %s

-- name: erasure.SQL_SELECT_ENDED_JOBS --
-- Listed jobs an erasure waited for that have ended (primary key).
SELECT id, errors FROM headgate_job WHERE id IN (%s, %s, %s) AND state IN ('succeeded', 'dead', 'cancelled')

-- name: postgresql.compliance.SQL_SELECT_ERASABLE_ARCHIVE --
-- Archived rows (every partition) carrying the tag, after a cursor, in archive_id order.
SELECT archive_id, evicted_at_ms, errors FROM headgate_job_archive WHERE headgate_job_archive.tags @> jsonb_build_array(%s::text)  AND archive_id > %s ORDER BY archive_id LIMIT %s

-- name: postgresql.compliance.SQL_SELECT_ERASABLE_HELD --
-- Held rows carrying the tag, after a cursor, in archive_id order.
SELECT archive_id, evicted_at_ms, errors FROM headgate_job_archive_held WHERE headgate_job_archive_held.tags @> jsonb_build_array(%s::text)  AND archive_id > %s ORDER BY archive_id LIMIT %s

-- name: postgresql.compliance.SQL_SELECT_ERASABLE_JOB --
-- Terminal hot rows carrying the tag, after a cursor, in primary-key order.
SELECT id, errors FROM headgate_job WHERE headgate_job.tags @> jsonb_build_array(%s::text) AND state IN ('succeeded', 'dead', 'cancelled') AND id > %s ORDER BY id LIMIT %s

-- name: postgresql.compliance.SQL_SELECT_HOT_PAYLOADS --
-- Hot rows with their payloads, after a cursor (key rotation).
SELECT id, state, attempts, task, args, kwargs, result, progress, output, errors FROM headgate_job WHERE id > %s ORDER BY id LIMIT %s

-- name: erasure.SQL_SELECT_PRESENT_JOBS --
-- Listed jobs still in the hot table (primary key).
SELECT id FROM headgate_job WHERE id IN (%s, %s, %s)

-- name: postgresql.compliance.SQL_SELECT_RELEASED_HELD_ROWS --
-- Held-table rows no unreleased hold covers any more (after a release), a batch of them.
SELECT archive_id FROM headgate_job_archive_held WHERE NOT EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (headgate_job_archive_held.tags @> jsonb_build_array(headgate_legal_hold.tag::text) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job_archive_held.job_id))) LIMIT %s

-- name: postgresql.compliance.SQL_SELECT_UNFINISHED_TAGGED --
-- Hot rows carrying the tag that wait or run (erased when they end), a bounded list of ids.
SELECT id FROM headgate_job WHERE headgate_job.tags @> jsonb_build_array(%s::text) AND state NOT IN ('succeeded', 'dead', 'cancelled') LIMIT %s

-- name: postgresql.compliance.SQL_UPDATE_ARCHIVE_PAYLOADS --
-- Rewrite one archived row's payloads (its key, so one partition).
UPDATE headgate_job_archive SET args = %s::jsonb, kwargs = %s::jsonb, result = %s::jsonb, errors = %s::jsonb WHERE archive_id = %s AND evicted_at_ms = %s

-- name: postgresql.compliance.SQL_UPDATE_HOT_PAYLOADS --
-- Rewrite one hot row's payloads and fingerprint, guarded by its state and attempts.
UPDATE headgate_job SET args = %s::jsonb, kwargs = %s::jsonb, result = %s::jsonb, progress = %s::jsonb, output = %s, errors = %s::jsonb, fingerprint = COALESCE(%s, fingerprint) WHERE id = %s AND (state = %s) IS NOT FALSE AND attempts = %s

-- name: sample_statements.SQL_COUNT_FINISHED_OUTCOMES --
-- Jobs of one retention class that finished in (since, until], per queue and outcome, with their
-- failed attempts that were retried (every attempt before the last). finished_at has no index:
-- expires_at = finished_at + the class's duration, so the window shifted by the duration is one
-- range of headgate_job_expires_idx. Parameters: class, expiry bounds, finish bounds.
SELECT queue, state, COUNT(*), SUM(CASE WHEN attempts > 1 THEN attempts - 1 ELSE 0 END)
FROM headgate_job
WHERE expires_at > %s AND expires_at <= %s AND retention_class = %s
  AND finished_at > %s AND finished_at <= %s AND state IN ('succeeded', 'dead')
GROUP BY queue, state

-- name: sample_statements.SQL_DELETE_SAMPLES --
-- Prune step 2: those rows, by primary key ({ids}: one %s per id).
DELETE FROM headgate_queue_sample WHERE id IN (%s, %s, %s)

-- name: sample_statements.SQL_EXPIRING_RETENTION_CLASSES --
-- Retention classes that expire (key, duration): finished jobs are found through their expiry.
SELECT rc.key, rc.duration FROM headgate_retention_class rc WHERE rc.duration IS NOT NULL

-- name: sample_statements.SQL_INSERT_QUEUE_SAMPLE --
-- One queue's row of a sample.
INSERT INTO headgate_queue_sample
    (sampled_at, queue, available, scheduled, running, held_back, succeeded, retried, dead)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)

-- name: sample_statements.SQL_LAST_SAMPLE_AT --
-- The newest sample's time (headgate_sample_at_idx): the previous sample ends the next window.
SELECT MAX(sampled_at) FROM headgate_queue_sample

-- name: sample_statements.SQL_SAMPLE_QUEUE_DEPTHS --
-- Live jobs per queue at the sample's moment: ready (available and due), scheduled (available,
-- due later), running, held back. Reads the live rows only, through headgate_job_claim_idx
-- (state, queue, ..., run_at): bounded by the backlog, never by the finished history.
SELECT queue,
       SUM(CASE WHEN state = 'available' AND run_at <= %s THEN 1 ELSE 0 END),
       SUM(CASE WHEN state = 'available' AND run_at > %s THEN 1 ELSE 0 END),
       SUM(CASE WHEN state = 'running' THEN 1 ELSE 0 END),
       SUM(CASE WHEN state = 'held_back' THEN 1 ELSE 0 END)
FROM headgate_job
WHERE state IN ('available', 'running', 'held_back')
GROUP BY queue

-- name: sample_statements.SQL_SELECT_OLD_SAMPLES --
-- Prune step 1: the oldest samples taken before the cutoff, at most %s (headgate_sample_at_idx).
SELECT id FROM headgate_queue_sample WHERE sampled_at < %s ORDER BY sampled_at LIMIT %s

-- name: postgresql.SQL_GET_STATEMENT_BUDGET --
-- The session's statement_timeout and lock_timeout, read before a budget is set and restored after.
SELECT current_setting('statement_timeout'), current_setting('lock_timeout')

-- name: postgresql.SQL_SET_LOCAL_STATEMENT_BUDGET --
-- Under transaction pooling the block is one transaction: set_config(..., true) = SET LOCAL.
SELECT set_config('statement_timeout', %s, true), set_config('lock_timeout', %s, true)

-- name: postgresql.SQL_SET_STATEMENT_BUDGET --
-- Session-wide (set_config(..., false)): it covers each transaction of a duty's batch and the
-- worker's autocommit statements (there is no transaction for SET LOCAL to scope).
SELECT set_config('statement_timeout', %s, false), set_config('lock_timeout', %s, false)

-- name: postgresql.archive_horizon.SQL_ARCHIVE_KIND --
-- The archive's relkind: 'p' when it is partitioned.
SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)

-- name: postgresql.archive_horizon.SQL_ATTACH_MONTH --
-- Re-attach a detached month that turned out to hold rows.
ALTER TABLE "headgate_job_archive" ATTACH PARTITION "headgate_job_archive_202501" FOR VALUES FROM (1735689600000) TO (1738368000000)

-- name: postgresql.archive_horizon.SQL_BOUNDED_COUNT --
-- Rows of one partition, counted up to a limit (%s: key, limit).
SELECT %s, (SELECT count(*) FROM (SELECT 1 FROM "headgate_job_archive_202501" LIMIT %s) AS bounded)

-- name: postgresql.archive_horizon.SQL_CATALOG --
-- The archive's attached partitions with their bounds.
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid)
FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
WHERE i.inhparent = to_regclass(%s)

-- name: postgresql.archive_horizon.SQL_CREATE_EDGE --
-- The new edge: a partition from the month after the last one to MAXVALUE.
CREATE TABLE "headgate_job_archive_202501" PARTITION OF "headgate_job_archive" FOR VALUES FROM (1735689600000) TO (MAXVALUE)

-- name: postgresql.archive_horizon.SQL_CREATE_MONTH --
-- A new month: a partition of the archive over its [start, end) bounds.
CREATE TABLE "headgate_job_archive_202501" PARTITION OF "headgate_job_archive" FOR VALUES FROM (1735689600000) TO (1738368000000)

-- name: postgresql.archive_horizon.SQL_DETACH --
-- Detach a partition in the caller's transaction (locks the parent).
ALTER TABLE "headgate_job_archive" DETACH PARTITION "headgate_job_archive_202501"

-- name: postgresql.archive_horizon.SQL_DETACHED_EDGES --
-- Plain tables named like an after edge, in the archive's schema, that are no partition.
SELECT c.relname FROM pg_class AS c
WHERE c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass(%s))
  AND c.relkind = 'r' AND NOT c.relispartition AND c.relname LIKE %s

-- name: postgresql.archive_horizon.SQL_DETACH_CONCURRENTLY --
-- Detach a partition without blocking readers and writers of the parent.
ALTER TABLE "headgate_job_archive" DETACH PARTITION "headgate_job_archive_202501" CONCURRENTLY

-- name: postgresql.archive_horizon.SQL_DETACH_FINALIZE --
-- Finish a DETACH ... CONCURRENTLY that was interrupted.
ALTER TABLE "headgate_job_archive" DETACH PARTITION "headgate_job_archive_202501" FINALIZE

-- name: postgresql.archive_horizon.SQL_DETACH_PENDING --
-- Whether a partition's DETACH ... CONCURRENTLY is pending (interrupted).
SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = to_regclass(%s)

-- name: postgresql.archive_horizon.SQL_DROP --
-- Drop a detached, empty partition table.
DROP TABLE "headgate_job_archive_202501"

-- name: postgresql.archive_horizon.SQL_GRANT --
-- Grant one privilege on a new partition to a role (or PUBLIC).
GRANT SELECT ON TABLE "headgate_job_archive_202501" TO "app_worker"

-- name: postgresql.archive_horizon.SQL_GRANTS --
-- Grants on a partition (besides its owner's), copied onto the partitions that replace it.
SELECT r.rolname, a.privilege_type, a.is_grantable
FROM pg_class AS c CROSS JOIN LATERAL aclexplode(c.relacl) AS a LEFT JOIN pg_roles AS r ON r.oid = a.grantee
WHERE c.oid = to_regclass(%s) AND a.grantee <> c.relowner

-- name: postgresql.archive_horizon.SQL_MOVE_BATCH --
-- One batch: the rows leave the detached edge and enter the archive in the same statement
-- (every stored column but expires_at_ms, which the target partition generates).
WITH moved AS (
    DELETE FROM "headgate_job_archive_202501" WHERE ctid = ANY (ARRAY(SELECT ctid FROM "headgate_job_archive_202501" LIMIT %s FOR UPDATE))
    RETURNING archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms
)
INSERT INTO "headgate_job_archive" (archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms) SELECT archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms FROM moved

-- name: postgresql.archive_horizon.SQL_PRIVILEGES --
-- Whether the connected role owns the archive and may create tables in its schema.
SELECT pg_has_role(current_user, c.relowner, 'USAGE'), has_schema_privilege(c.relnamespace, 'CREATE'),
       current_user, pg_get_userbyid(c.relowner)
FROM pg_class AS c WHERE c.oid = to_regclass(%s)

-- name: postgresql.archive_horizon.SQL_SESSION_LOCK_TIMEOUT --
-- Lock wait bound of the session (DETACH ... CONCURRENTLY runs outside a transaction).
SELECT set_config('lock_timeout', %s, false)

-- name: postgresql.archive_horizon.SQL_SHOW_LOCK_TIMEOUT --
-- The session's lock_timeout, read before DETACH ... CONCURRENTLY and restored after it.
SHOW lock_timeout

-- name: privileges_postgresql.SQL_DATABASE_CREATE --
-- CREATE on the connected database (new schemas: DDL outside Headgate's tables).
SELECT has_database_privilege(current_database(), 'CREATE')

-- name: privileges_postgresql.SQL_POWERS --
-- The roles the connected role is a member of (itself included; membership through other roles
-- too, since it can SET ROLE to them) that carry a power no runtime or retention role needs: a
-- role attribute, or one of the predefined roles named in the list.
SELECT r.rolname, r.rolname = current_user, r.rolsuper, r.rolcreaterole, r.rolcreatedb,
       r.rolreplication, r.rolbypassrls, r.rolname = ANY(%s)
FROM pg_roles r
WHERE pg_has_role(current_user, r.oid, 'MEMBER')
  AND (r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls
       OR r.rolname = ANY(%s))
ORDER BY r.rolname

-- name: privileges_postgresql.SQL_SESSION --
-- Who is connected, in which database and schema, and the schema privileges that matter.
SELECT current_user, current_database(), current_schema(),
       has_schema_privilege(current_schema(), 'USAGE'), has_schema_privilege(current_schema(), 'CREATE'),
       (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)

-- name: privileges_postgresql.SQL_TABLE_PRIVILEGES --
-- Per table of the schema named in the list: the connected role's privileges and whether it
-- owns the table (or is a member of its owner: then it can ALTER and DROP it).
SELECT c.relname,
       has_table_privilege(c.oid, 'SELECT'), has_table_privilege(c.oid, 'INSERT'),
       has_table_privilege(c.oid, 'UPDATE'), has_table_privilege(c.oid, 'DELETE'),
       has_table_privilege(c.oid, 'TRUNCATE'), has_table_privilege(c.oid, 'TRIGGER'),
       pg_has_role(c.relowner, 'USAGE')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relname = ANY(%s)
