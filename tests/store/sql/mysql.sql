-- The SQL of django-headgate's mysql store, as it runs: generated from the code by
-- `.venv/bin/python -m tests.store.render_sql` (tests/store/render_sql.py tells how);
-- never edit by hand. Call-time pieces are filled with the examples documented there.

-- name: mysql.jobs.SQL_APPEND_OUTPUT --
-- Append to the job's output, keeping the last %s characters (fenced).
UPDATE headgate_job SET output = RIGHT(CONCAT(COALESCE(output, ''), %s), %s) WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE

-- name: mysql.jobs.SQL_CANCEL --
-- Operator cancel of a job that waits: available, waiting for other jobs or held back by a limit
-- -> cancelled (primary key).
UPDATE headgate_job
SET state = 'cancelled', finished_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.`key` = headgate_job.retention_class) MICROSECOND, lease_owner = NULL, lease_expires_at = NULL
WHERE id = %s AND (state IN ('available', 'waiting', 'held_back')) IS NOT FALSE

-- name: mysql.jobs.SQL_CANCEL_ABORTED --
-- A running attempt whose abort was requested ends cancelled (fenced, primary key; {fenced}:
-- FENCED, or FENCED_UNLOCKED).
UPDATE headgate_job SET state = 'cancelled', finished_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.`key` = headgate_job.retention_class) MICROSECOND, lease_owner = NULL, lease_expires_at = NULL WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE AND abort_requested_at IS NOT NULL

-- name: mysql.jobs.SQL_CLAIM_SELECT --
-- Claim step 1: lock ready rows, skipping those other workers hold (claim index).
SELECT id, queue, task, args, kwargs, attempts, max_attempts, fence, snoozes, timeout, abort_requested_at, concurrency_key, concurrency_limit FROM headgate_job WHERE state = 'available' AND run_at <= UTC_TIMESTAMP(6) AND queue = %s ORDER BY priority DESC, run_at LIMIT %s FOR UPDATE SKIP LOCKED

-- name: mysql.jobs.SQL_CLAIM_UPDATE --
-- Claim step 2: lease the locked rows (same transaction).
UPDATE headgate_job SET state = 'running', attempts = attempts + 1, fence = fence + 1, lease_owner = %s, lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %s MICROSECOND, started_at = UTC_TIMESTAMP(6) WHERE id IN (%s, %s, %s)

-- name: mysql.jobs.SQL_FAIL --
-- Fenced failure: retry after a delay, or dead when attempts are exhausted (or give_up).
UPDATE headgate_job SET errors = JSON_ARRAY_APPEND(errors, '$', JSON_EXTRACT(JSON_SET(%s, '$.at', DATE_FORMAT(UTC_TIMESTAMP(6), '%%Y-%%m-%%dT%%H:%%i:%%s.%%fZ')), '$')), run_at = CASE WHEN (%s OR attempts >= max_attempts) THEN run_at ELSE UTC_TIMESTAMP(6) + INTERVAL %s MICROSECOND END, finished_at = CASE WHEN (%s OR attempts >= max_attempts) THEN UTC_TIMESTAMP(6) END, expires_at = CASE WHEN (%s OR attempts >= max_attempts) THEN UTC_TIMESTAMP(6) + INTERVAL (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.`key` = headgate_job.retention_class) MICROSECOND END, state = CASE WHEN (%s OR attempts >= max_attempts) THEN 'dead' ELSE 'available' END, lease_owner = NULL, lease_expires_at = NULL WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE

-- name: fragments.SQL_GET_STATE --
-- State of one job (primary key).
SELECT state FROM headgate_job WHERE id = %s

-- name: mysql.jobs.SQL_ID_TAKEN --
-- After a duplicate key: does a row hold our id (primary key)?
SELECT 1 FROM headgate_job WHERE id = %s

-- name: mysql.jobs.SQL_INSERTED_TIMES --
-- created_at and run_at of the job just inserted (primary key).
SELECT created_at, run_at FROM headgate_job WHERE id = %s

-- name: mysql.jobs.SQL_INSERT_JOB --
-- Insert one job (a unique_key held by a hot row raises ER_DUP_ENTRY: insert_job tells the keys apart).
INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts, fence, unique_key, fingerprint, errors, tags, retention_class, created_at, timeout) VALUES (%s, %s, %s, %s, %s, %s, 'available', COALESCE(%s, UTC_TIMESTAMP(6) + INTERVAL %s MICROSECOND), 0, %s, 0, %s, %s, '[]', %s, %s, UTC_TIMESTAMP(6), %s)

-- name: mysql.jobs.SQL_INSERT_JOBS_HEAD --
-- The head of a multi-row insert (enqueue_many).
INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts, fence, unique_key, fingerprint, errors, tags, retention_class, created_at, timeout) VALUES

-- name: mysql.jobs.SQL_INSERT_JOB_ROW --
-- Insert one job (run_at absolute, or now + delay); many rows share the head.
(%s, %s, %s, %s, %s, %s, 'available', COALESCE(%s, UTC_TIMESTAMP(6) + INTERVAL %s MICROSECOND), 0, %s, 0, %s, %s, '[]', %s, %s, UTC_TIMESTAMP(6), %s)

-- name: fragments.SQL_MARK_UNIQUE_UNTIL_FINISHED --
-- A job just inserted holds its unique key only until it is terminal (primary key).
UPDATE headgate_job SET unique_until = 'finished' WHERE id = %s

-- name: mysql.jobs.SQL_NOW --
-- Store clock.
SELECT UTC_TIMESTAMP(6)

-- name: fragments.SQL_RELEASE_UNIQUE_KEY --
-- Release the key of a terminal job enqueued until "finished", if it still holds that key
-- (primary key; the other conditions make a concurrent release a no-op).
UPDATE headgate_job SET unique_key = NULL WHERE id = %s AND unique_key = %s AND state IN ('succeeded', 'dead', 'cancelled') AND unique_until = 'finished'

-- name: mysql.jobs.SQL_REQUEST_ABORT --
-- Operator cancel of a running job: request its abort (the first request's time is kept); the
-- worker reads it back through its lease renewal (primary key).
UPDATE headgate_job SET abort_requested_at = COALESCE(abort_requested_at, UTC_TIMESTAMP(6))
WHERE id = %s AND (state = 'running') IS NOT FALSE

-- name: mysql.jobs.SQL_RESCUE_RELEASE --
-- Rescue step 2, one locked row: available again now, or dead when attempts are exhausted.
UPDATE headgate_job SET errors = JSON_ARRAY_APPEND(errors, '$', JSON_EXTRACT(JSON_SET(%s, '$.at', DATE_FORMAT(UTC_TIMESTAMP(6), '%%Y-%%m-%%dT%%H:%%i:%%s.%%fZ')), '$')), run_at = CASE WHEN attempts >= max_attempts THEN UTC_TIMESTAMP(6) ELSE UTC_TIMESTAMP(6) END, finished_at = CASE WHEN attempts >= max_attempts THEN UTC_TIMESTAMP(6) END, expires_at = CASE WHEN attempts >= max_attempts THEN UTC_TIMESTAMP(6) + INTERVAL (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.`key` = headgate_job.retention_class) MICROSECOND END, state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'available' END, lease_owner = NULL, lease_expires_at = NULL WHERE id = %s AND (state = 'running') IS NOT FALSE

-- name: mysql.jobs.SQL_RESCUE_SELECT --
-- Rescue: lock lapsed leases, skipping rows another maintainer holds; release each.
SELECT id, attempts, lease_owner FROM headgate_job WHERE state = 'running' AND lease_expires_at < UTC_TIMESTAMP(6) ORDER BY lease_expires_at LIMIT %s FOR UPDATE SKIP LOCKED

-- name: mysql.jobs.SQL_RETRY --
-- Operator retry: dead/cancelled -> available now; one more attempt when they were exhausted;
-- an earlier abort request is forgotten.
UPDATE headgate_job
SET state = 'available', run_at = UTC_TIMESTAMP(6), max_attempts = GREATEST(max_attempts, attempts + 1),
    finished_at = NULL, expires_at = NULL, result = NULL, abort_requested_at = NULL
WHERE id = %s AND (state IN ('dead', 'cancelled')) IS NOT FALSE

-- name: mysql.jobs.SQL_SET_PROGRESS --
-- Fenced progress write ({value}: the bound JSON, cast where the vendor needs it).
UPDATE headgate_job SET progress = %s WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE

-- name: mysql.operations.SQL_OPERATION_CANCEL --
-- Cancel the selected jobs that wait (primary key; still available, waiting for other jobs or
-- held back by a limit).
UPDATE headgate_job SET state = 'cancelled', finished_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.`key` = headgate_job.retention_class) MICROSECOND, lease_owner = NULL, lease_expires_at = NULL WHERE id IN (%s, %s, %s) AND state IN ('available', 'waiting', 'held_back')

-- name: operation_fragments.SQL_OPERATION_DISCARD --
-- Delete the selected jobs that never ran (primary key; the rule is checked again).
DELETE FROM headgate_job WHERE id IN (%s, %s, %s) AND (state IN (%s, %s)) IS NOT FALSE AND attempts = 0 AND snoozes IS NULL

-- name: mysql.operations.SQL_OPERATION_REQUEST_ABORT --
-- Request the abort of the selected running jobs (primary key; still running).
UPDATE headgate_job SET abort_requested_at = COALESCE(abort_requested_at, UTC_TIMESTAMP(6)) WHERE id IN (%s, %s, %s) AND state = 'running'

-- name: operation_fragments.SQL_OPERATION_RESCHEDULE --
-- Move the selected waiting jobs to a bound time (primary key; still available).
UPDATE headgate_job SET run_at = %s WHERE id IN (%s, %s, %s) AND (state = 'available') IS NOT FALSE

-- name: mysql.operations.SQL_OPERATION_RETRY --
-- Retry the selected dead/cancelled jobs (primary key; the state is checked again).
UPDATE headgate_job SET state = 'available', run_at = UTC_TIMESTAMP(6), max_attempts = GREATEST(max_attempts, attempts + 1),
    finished_at = NULL, expires_at = NULL, result = NULL, abort_requested_at = NULL WHERE id IN (%s, %s, %s) AND state IN (%s, %s)

-- name: mysql.operations.SQL_OPERATION_RUN_NOW --
-- Make the selected deferred or snoozed jobs due now (primary key; still available, not yet due).
UPDATE headgate_job SET run_at = UTC_TIMESTAMP(6) WHERE id IN (%s, %s, %s) AND (state = 'available') IS NOT FALSE AND run_at > UTC_TIMESTAMP(6)

-- name: mysql.operations.SQL_OPERATION_SELECT --
-- Lock a batch of matching jobs, skipping rows a worker holds (primary key order).
SELECT id FROM headgate_job WHERE state IN (%s, %s) AND attempts = 0 AND snoozes IS NULL AND id > %s AND queue = %s ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED

-- name: operation_fragments.SQL_OPERATION_SELECT_UNLOCKED --
-- Read a page of matching jobs without locking them (list, dry run).
SELECT id FROM headgate_job WHERE state IN (%s, %s) AND attempts = 0 AND snoozes IS NULL AND id > %s AND queue = %s ORDER BY id LIMIT %s

-- name: operation_fragments.SQL_READ_JOB_META --
-- current_job().meta and the consumer span: the meta of one job (primary key).
SELECT meta FROM headgate_job WHERE id = %s

-- name: mysql.operations.SQL_SET_JOB_META --
-- enqueue(meta=): the meta of a job just inserted, in the enqueue's transaction (primary key; an
-- idempotent replay's holder keeps its own; {value}: the bound JSON, cast where the vendor needs it).
UPDATE headgate_job SET meta = %s WHERE id = %s AND meta IS NULL AND attempts = 0

-- name: fragments.SQL_DELETE_HEARTBEAT --
-- Delete our own heartbeat row on a clean exit (primary key + instance).
DELETE FROM headgate_worker_heartbeat WHERE worker_id = %s AND instance_id = %s

-- name: mysql.heartbeats.SQL_PRUNE_HEARTBEATS_DELETE --
-- Prune step 2: delete the rows step 1 locked (same transaction; primary key).
DELETE FROM headgate_worker_heartbeat WHERE worker_id IN (%s, %s, %s)

-- name: mysql.heartbeats.SQL_PRUNE_HEARTBEATS_SELECT --
-- Prune step 1: lock stale heartbeat rows, skipping rows a renewal holds, at most LIMIT.
-- {exclude_own} is empty or EXCLUDE_OWN_HEARTBEAT.
SELECT worker_id FROM headgate_worker_heartbeat WHERE last_heartbeat_at < UTC_TIMESTAMP(6) - INTERVAL %s MICROSECOND AND NOT (worker_id = %s AND instance_id = %s) ORDER BY last_heartbeat_at LIMIT %s FOR UPDATE SKIP LOCKED

-- name: mysql.heartbeats.SQL_REGISTER_HEARTBEAT --
-- Register our heartbeat row, or take it over when the worker_id is there already.
INSERT INTO headgate_worker_heartbeat (worker_id, instance_id, hostname, pid, queues, started_at, last_heartbeat_at) VALUES (%s, %s, %s, %s, %s, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE instance_id = VALUES(instance_id), hostname = VALUES(hostname), pid = VALUES(pid), queues = VALUES(queues), started_at = UTC_TIMESTAMP(6), last_heartbeat_at = UTC_TIMESTAMP(6)

-- name: mysql.heartbeats.SQL_RENEW_HEARTBEAT --
-- Renew our own heartbeat row (primary key + instance).
UPDATE headgate_worker_heartbeat SET last_heartbeat_at = UTC_TIMESTAMP(6) WHERE worker_id = %s AND instance_id = %s

-- name: mysql.heartbeats.SQL_TRY_LOCK --
-- GET_LOCK names are server-wide (not per database, unlike PostgreSQL's advisory locks): the
-- name is prefixed with the database name so two installations on one server never share a
-- singleton. Names are limited to 64 characters, so a long one is hashed.
SELECT GET_LOCK(%s, 0)

-- name: mysql.heartbeats.SQL_UNLOCK --
-- Release a GET_LOCK lock.
SELECT RELEASE_LOCK(%s)

-- name: mysql.sweep.SQL_ARCHIVE_ESTIMATES --
-- InnoDB's row estimate of every partition (information_schema: no scan).
SELECT PARTITION_NAME, TABLE_ROWS FROM information_schema.PARTITIONS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'headgate_job_archive'

-- name: mysql.sweep.SQL_ARCHIVE_HAS_ROWS --
-- {partition} is a quoted partition name from archive_layout; PARTITION (...) reads only it.
SELECT EXISTS (SELECT 1 FROM headgate_job_archive PARTITION (`p202501`))

-- name: mysql.sweep.SQL_ARCHIVE_HAS_UNEXPIRED --
-- Any row of the partition not yet expired: one probe of headgate_archive_expires_idx.
SELECT EXISTS (SELECT 1 FROM headgate_job_archive PARTITION (`p202501`) WHERE expires_at_ms > %s)

-- name: mysql.sweep.SQL_GET_LOCK_WAIT_TIMEOUT --
-- LOCK TABLES ... WRITE waits (at most lock_wait_timeout) for transactions that wrote to the
-- archive to end and holds new writers until UNLOCK TABLES; it commits any open transaction.
SELECT @@SESSION.lock_wait_timeout

-- name: mysql.sweep.SQL_LOCK_ARCHIVE --
-- Hold the archive against writers until UNLOCK TABLES (waits at most lock_wait_timeout); a
-- prune also moves held rows (compliance.SQL_MOVE_HELD_ARCHIVE_ROWS), so the held table and the
-- hold tables are locked with it (under LOCK TABLES no other table can be read).
LOCK TABLES headgate_job_archive WRITE, headgate_job_archive_held WRITE, headgate_legal_hold READ, headgate_legal_hold_job READ

-- name: mysql.sweep.SQL_NOW_MS --
-- Store clock in integer milliseconds (as evicted_at_ms).
SELECT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)

-- name: mysql.sweep.SQL_SET_LOCK_WAIT_TIMEOUT --
-- Set (or restore) the session's lock_wait_timeout, whole seconds.
SET SESSION lock_wait_timeout = %s

-- name: mysql.sweep.SQL_SWEEP_ARCHIVE --
-- Copy the locked rows of archived queues. {archive_id}: UUID() for a native uuid column
-- (MariaDB >= 10.7), else its 32 hex digits.
INSERT INTO headgate_job_archive (archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms)
SELECT UUID(), j.id, j.queue, j.task, j.args, j.kwargs, j.errors, j.attempts, j.fingerprint,
       j.state, j.result, j.tags, j.created_at, j.finished_at, (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000), p.archive_retention DIV 1000
FROM headgate_job AS j JOIN headgate_archive_policy AS p ON p.queue = j.queue
WHERE j.id IN (%s, %s, %s)

-- name: fragments.SQL_SWEEP_DELETE --
-- Sweep step "delete" (same transaction): the selected rows, by primary key, still terminal.
DELETE FROM headgate_job WHERE id IN (%s, %s, %s) AND state IN ('succeeded', 'dead', 'cancelled')

-- name: mysql.sweep.SQL_SWEEP_SELECT --
-- Sweep step "select": expired terminal rows, oldest expiry first (headgate_job_expires_idx);
-- {lock} skips rows locked by others where the vendor can; {queue_filter}: see queue_filter().
SELECT id FROM headgate_job WHERE state IN ('succeeded', 'dead', 'cancelled') AND expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (JSON_CONTAINS(headgate_job.tags, JSON_QUOTE(headgate_legal_hold.tag)) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job.id))) AND queue = %s ORDER BY expires_at LIMIT %s FOR UPDATE SKIP LOCKED

-- name: mysql.sweep.SQL_TRUNCATE_ARCHIVE_PARTITION --
-- Prune a month: empty its partition at once (under LOCK TABLES).
ALTER TABLE headgate_job_archive TRUNCATE PARTITION `p202501`

-- name: mysql.sweep.SQL_UNLOCK_TABLES --
-- Release LOCK TABLES.
UNLOCK TABLES

-- name: mysql.worker.SQL_COMPLETE_LOCKED --
-- Acknowledgement step 2 (same transaction): the locked rows succeed; {result} is NULL or a
-- CASE id WHEN ... THEN ... END of their results.
UPDATE headgate_job
SET state = 'succeeded', result = CASE id WHEN %s THEN %s WHEN %s THEN %s END, finished_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.`key` = headgate_job.retention_class) MICROSECOND,
    lease_owner = NULL, lease_expires_at = NULL
WHERE id IN (%s, %s, %s)

-- name: mysql.worker.SQL_LOCK_FENCED --
-- Before a failure, snooze or cancellation of one attempt (same transaction): lock its row by
-- primary key, skipping it when someone else holds it, so that the write never waits for it (an
-- UPDATE cannot select from its own table: MariaDB error 1093).
SELECT id FROM headgate_job WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE FOR UPDATE SKIP LOCKED

-- name: mysql.worker.SQL_LOCK_RUNNING --
-- Acknowledgement step 1: lock the rows to acknowledge that are still running, in id order,
-- skipping rows someone else holds, so it never waits; renewal takes the same order and also
-- skips, so acknowledgement and renewal can never deadlock (fences are compared in Python).
-- Renewal reads whether each row's abort was requested in the same step; an acknowledgement,
-- whether other jobs depend on it (their release follows in the same transaction).
SELECT id, fence, abort_requested_at, has_dependents FROM headgate_job
WHERE id IN (%s, %s, %s) AND (state = 'running') IS NOT FALSE AND lease_owner = %s
ORDER BY id
FOR UPDATE SKIP LOCKED

-- name: mysql.worker.SQL_LOCK_RUNNING_ANY_OWNER --
-- Acknowledgement step 1: lock the rows to acknowledge that are still running, in id order,
-- skipping rows someone else holds, so it never waits; renewal takes the same order and also
-- skips, so acknowledgement and renewal can never deadlock (fences are compared in Python).
-- Renewal reads whether each row's abort was requested in the same step; an acknowledgement,
-- whether other jobs depend on it (their release follows in the same transaction).
SELECT id, fence, abort_requested_at, has_dependents FROM headgate_job
WHERE id IN (%s, %s, %s) AND (state = 'running') IS NOT FALSE 
ORDER BY id
FOR UPDATE SKIP LOCKED

-- name: mysql.worker.SQL_LOCK_RUNNING_OWNED --
-- Acknowledgement step 1: lock the rows to acknowledge that are still running, in id order,
-- skipping rows someone else holds, so it never waits; renewal takes the same order and also
-- skips, so acknowledgement and renewal can never deadlock (fences are compared in Python).
-- Renewal reads whether each row's abort was requested in the same step; an acknowledgement,
-- whether other jobs depend on it (their release follows in the same transaction).
SELECT id, fence, abort_requested_at, has_dependents FROM headgate_job
WHERE id IN (%s, %s, %s) AND (state = 'running') IS NOT FALSE AND lease_owner = %s
ORDER BY id
FOR UPDATE SKIP LOCKED

-- name: fragments.SQL_READ_FENCES --
-- State and fence of some jobs, consistent read without locks (primary key; {ids}: placeholders).
SELECT id, state, fence FROM headgate_job WHERE id IN (%s, %s, %s)

-- name: fragments.SQL_RELEASE --
-- Give a lease back unspent: available again, the attempt not counted, run_at kept (fenced).
UPDATE headgate_job
SET state = 'available', attempts = attempts - 1, lease_owner = NULL, lease_expires_at = NULL,
    started_at = NULL
WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE AND lease_owner = %s

-- name: mysql.worker.SQL_RENEW_LOCKED --
-- Renewal step 2 (same transaction): extend the locked rows' leases.
UPDATE headgate_job SET lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %s MICROSECOND WHERE id IN (%s, %s, %s)

-- name: mysql.worker.SQL_RESET_IDLE_TRANSACTION_BOUND --
-- Undo SQL_SET_IDLE_TRANSACTION_BOUND.
SET SESSION idle_transaction_timeout = DEFAULT

-- name: mysql.worker.SQL_SET_IDLE_TRANSACTION_BOUND --
-- MariaDB: end the session when a transaction of it idles longer than %s seconds (DEFAULT: the
-- server's, 0 = off). MySQL 8 has no such variable.
SET SESSION idle_transaction_timeout = %s

-- name: mysql.worker.SQL_SNOOZE --
-- Snooze one job (fenced): available again after a bound duration, attempt not spent.
UPDATE headgate_job SET state = 'available', attempts = attempts - 1, run_at = UTC_TIMESTAMP(6) + INTERVAL %s MICROSECOND, snoozes = COALESCE(snoozes, 0) + 1, started_at = NULL, lease_owner = NULL, lease_expires_at = NULL WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE

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

-- name: mysql.flow.SQL_EXISTING_FLOW_KEYS --
-- The lock rows among some keys, read without locking (primary key; {keys}: placeholders).
SELECT `key` FROM headgate_flow_key WHERE `key` IN (%s, %s)

-- name: flow_fragments.SQL_HELD_BACK_KEYS --
-- Keys of the first held-back rows in claim order (headgate_job_claim_any_idx), at most %s rows.
SELECT concurrency_key FROM headgate_job WHERE state = 'held_back' ORDER BY priority DESC, run_at LIMIT %s

-- name: flow_fragments.SQL_HELD_BACK_OF_KEY --
-- Held-back rows of one key in claim order, at most %s (headgate_job_flow_key_idx); a release
-- joins one per key with UNION ALL (a derived table: each keeps its own ORDER BY and LIMIT).
SELECT * FROM (SELECT id, concurrency_key, concurrency_limit FROM headgate_job WHERE concurrency_key = %s AND state = 'held_back' ORDER BY priority DESC, run_at LIMIT %s) AS held

-- name: flow_fragments.SQL_HOLD_BACK_MANY --
-- Claimed jobs over their key's limit are held back (primary key; only while still leased to the
-- worker, %s after the ids): no lease, their attempt not counted.
UPDATE headgate_job SET state = 'held_back', attempts = attempts - 1, lease_owner = NULL, lease_expires_at = NULL, started_at = NULL WHERE id IN (%s, %s, %s) AND (state = 'running') IS NOT FALSE AND lease_owner = %s

-- name: mysql.flow.SQL_INSERT_FLOW_KEY --
-- A key's lock row, inserted once (only when the read found none: an insert that meets a
-- duplicate would hold a shared lock on it until commit).
INSERT IGNORE INTO headgate_flow_key (`key`, window_count) VALUES (%s, 0)

-- name: flow_fragments.SQL_KEYS_OF_JOBS --
-- The distinct concurrency keys of some jobs (primary key; {ids}: placeholders).
SELECT DISTINCT concurrency_key FROM headgate_job WHERE id IN (%s, %s, %s) AND concurrency_key IS NOT NULL

-- name: mysql.flow.SQL_LOCK_FLOW_KEY --
-- Lock a key's row until the transaction ends: claims and releases of one key take turns.
SELECT `key` FROM headgate_flow_key WHERE `key` = %s FOR UPDATE

-- name: mysql.flow.SQL_LOCK_FLOW_KEYS --
-- The same for several keys, locked in key order (the primary key's scan order).
SELECT `key` FROM headgate_flow_key WHERE `key` IN (%s, %s) ORDER BY `key` FOR UPDATE

-- name: mysql.flow.SQL_LOCK_QUEUE_CONTROL --
-- Lock a queue's control row until the transaction ends: controlled claims of a queue take turns.
SELECT queue FROM headgate_queue_control WHERE queue = %s FOR UPDATE

-- name: flow_fragments.SQL_MAKE_AVAILABLE --
-- Held-back rows become claimable again, run_at kept (primary key; {ids}: placeholders).
UPDATE headgate_job SET state = 'available' WHERE id IN (%s, %s, %s) AND (state = 'held_back') IS NOT FALSE

-- name: mysql.flow.SQL_READ_FLOW_WINDOW --
-- A rate scope's window (primary key; {key}: the vendor's quoting).
SELECT window_started_at, window_count FROM headgate_flow_key WHERE `key` = %s

-- name: flow_fragments.SQL_READ_QUEUE_CONTROL --
-- A queue's controls (primary key), read after SQL_LOCK_QUEUE_CONTROL in the same transaction.
SELECT paused, concurrency, rate_limit, window_started_at, window_count FROM headgate_queue_control WHERE queue = %s

-- name: flow_fragments.SQL_SET_CONCURRENCY --
-- Store a job's concurrency key and limit, just after its insert (primary key).
UPDATE headgate_job SET concurrency_key = %s, concurrency_limit = %s WHERE id = %s

-- name: mysql.flow.SQL_SET_FLOW_WINDOW --
-- A rate scope's window after an admission (primary key).
UPDATE headgate_flow_key SET window_started_at = %s, window_count = %s WHERE `key` = %s

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

-- name: mysql.workflows.SQL_CANCEL_WAITING --
-- A waiting job whose parent failed ends cancelled (primary key).
UPDATE headgate_job SET state = 'cancelled', waiting_for = 0, finished_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.`key` = headgate_job.retention_class) MICROSECOND WHERE id = %s AND (state = 'waiting') IS NOT FALSE

-- name: mysql.workflows.SQL_CLAIM_BY_ID --
-- Lease one available job by id, due or not (the testing kit's run_job; primary key).
UPDATE headgate_job SET state = 'running', attempts = attempts + 1, fence = fence + 1, lease_owner = %s, lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %s MICROSECOND, started_at = UTC_TIMESTAMP(6) WHERE id = %s AND (state = 'available') IS NOT FALSE

-- name: workflow_statements.SQL_CLOSE_BATCH --
-- Close a batch: its total and callbacks (primary key).
UPDATE headgate_batch SET total = %s, on_success_id = %s, on_finish_id = %s, on_dead_id = %s WHERE id = %s

-- name: mysql.workflows.SQL_COMPLETE_FENCED --
-- The fenced success of a job inside its task's own transaction (current_job().atomic()):
-- waits for a row lock (a renewal's, briefly) rather than skipping it.
UPDATE headgate_job SET state = 'succeeded', result = %s, finished_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL (SELECT rc.duration FROM headgate_retention_class rc WHERE rc.`key` = headgate_job.retention_class) MICROSECOND, lease_owner = NULL, lease_expires_at = NULL WHERE id = %s AND fence = %s AND (state = 'running') IS NOT FALSE

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

-- name: mysql.workflows.SQL_FINISH_BATCH --
-- Mark a batch finished, once (primary key).
UPDATE headgate_batch SET finished_at = UTC_TIMESTAMP(6) WHERE id = %s AND finished_at IS NULL

-- name: workflow_statements.SQL_FLAG_PARENTS --
-- Flag the parents not yet ended: their end runs the release step (primary key).
UPDATE headgate_job SET has_dependents = TRUE WHERE id IN (%s, %s, %s)

-- name: workflow_statements.SQL_FORGET_EDGES --
-- Delete the edges of jobs that no longer wait ({ids} twice: the same ids).
DELETE FROM headgate_job_dependency WHERE child_id IN (%s, %s, %s) AND child_id NOT IN (SELECT id FROM headgate_job WHERE id IN (%s, %s, %s) AND (state = 'waiting') IS NOT FALSE)

-- name: workflow_statements.SQL_HOLD_CALLBACK --
-- A callback job waits for its batch's end (primary key).
UPDATE headgate_job SET state = 'waiting', waiting_for = 1 WHERE id = %s AND (state = 'available') IS NOT FALSE

-- name: mysql.workflows.SQL_INSERT_BATCH --
-- An open batch: no total until its block closes.
INSERT INTO headgate_batch (id, total, succeeded, dead, cancelled, created_at) VALUES (%s, NULL, 0, 0, 0, UTC_TIMESTAMP(6))

-- name: workflow_statements.SQL_INSERT_EDGE_HEAD --
-- One edge per pending parent: the head, then one SQL_EDGE_ROW per edge.
INSERT INTO headgate_job_dependency (parent_id, child_id) VALUES

-- name: mysql.workflows.SQL_LOCK_PARENTS --
-- A locking read: the latest committed states, whatever the transaction read before.
SELECT id, state FROM headgate_job WHERE id IN (%s, %s, %s) ORDER BY id FOR UPDATE

-- name: workflow_statements.SQL_PARENT_RESULTS --
-- The results of a job's parents (primary key).
SELECT id, result FROM headgate_job WHERE id IN (%s, %s, %s)

-- name: mysql.workflows.SQL_READ_BATCH --
-- A batch's counts and callbacks ({lock}: FOR UPDATE where the vendor has row locks, so that the
-- read sees the latest committed counts).
SELECT total, succeeded, dead, cancelled, on_success_id, on_finish_id, on_dead_id FROM headgate_batch WHERE id = %s FOR UPDATE

-- name: workflow_statements.SQL_READ_CLAIMED --
-- The claimed columns of one job (primary key).
SELECT id, queue, task, args, kwargs, attempts, max_attempts, fence, snoozes, timeout, abort_requested_at, concurrency_key, concurrency_limit FROM headgate_job WHERE id = %s

-- name: mysql.workflows.SQL_RECORD_PARENTS --
-- A dependent job just inserted: waiting (or available when no parent is pending), its parents
-- and its policy (primary key).
UPDATE headgate_job SET state = %s, waiting_for = %s, on_parent_failure = %s, depends_on = %s WHERE id = %s

-- name: workflow_statements.SQL_RELEASE_WAITING --
-- Waiting jobs count %s parents less and turn available at zero. MySQL evaluates SET left to
-- right: the state is assigned first, from the old count.
UPDATE headgate_job SET state = CASE WHEN waiting_for <= %s THEN 'available' ELSE state END, waiting_for = waiting_for - %s WHERE (state = 'waiting') IS NOT FALSE AND id IN (%s, %s, %s)

-- name: mysql.compliance.SQL_BLANK_ARCHIVE --
-- Blank one archived row's payloads (primary key, so one partition).
UPDATE headgate_job_archive SET args = %s, kwargs = %s, result = NULL, errors = %s WHERE archive_id = %s AND evicted_at_ms = %s

-- name: mysql.compliance.SQL_BLANK_HELD --
-- Blank one held row's payloads (primary key).
UPDATE headgate_job_archive_held SET args = %s, kwargs = %s, result = NULL, errors = %s WHERE archive_id = %s AND evicted_at_ms = %s

-- name: mysql.compliance.SQL_BLANK_JOB --
-- Blank one hot row's payloads (primary key).
UPDATE headgate_job SET args = %s, kwargs = %s, result = NULL, output = NULL, progress = NULL, errors = %s WHERE id = %s

-- name: mysql.compliance.SQL_COUNT_HELD_ARCHIVE_ROWS --
-- Held rows of one archive partition ({partition}: a quoted name from archive_layout).
SELECT count(*) FROM headgate_job_archive PARTITION (`p202501`) WHERE EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (JSON_CONTAINS(headgate_job_archive.tags, JSON_QUOTE(headgate_legal_hold.tag)) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job_archive.job_id)))

-- name: mysql.compliance.SQL_COUNT_HELD_TAGGED --
-- Rows carrying the tag under a legal hold, in the three tables.
SELECT (SELECT count(*) FROM headgate_job WHERE JSON_CONTAINS(headgate_job.tags, JSON_QUOTE(%s)) AND EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (JSON_CONTAINS(headgate_job.tags, JSON_QUOTE(headgate_legal_hold.tag)) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job.id)))) + (SELECT count(*) FROM headgate_job_archive WHERE JSON_CONTAINS(headgate_job_archive.tags, JSON_QUOTE(%s)) AND EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (JSON_CONTAINS(headgate_job_archive.tags, JSON_QUOTE(headgate_legal_hold.tag)) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job_archive.job_id)))) + (SELECT count(*) FROM headgate_job_archive_held WHERE JSON_CONTAINS(headgate_job_archive_held.tags, JSON_QUOTE(%s)) AND EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (JSON_CONTAINS(headgate_job_archive_held.tags, JSON_QUOTE(headgate_legal_hold.tag)) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job_archive_held.job_id))))

-- name: holds.SQL_DELETE_HELD_ROWS --
-- Delete held-table rows by primary key.
DELETE FROM headgate_job_archive_held WHERE archive_id IN (%s, %s, %s)

-- name: mysql.compliance.SQL_MOVE_HELD_ARCHIVE_ROWS --
-- Copy the held rows of one partition into the held table (under LOCK TABLES, before its
-- TRUNCATE PARTITION); a row copied by an interrupted earlier prune is left as it is.
INSERT IGNORE INTO headgate_job_archive_held (archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms)
SELECT archive_id, job_id, queue, task, args, kwargs, errors, attempts, fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms FROM headgate_job_archive PARTITION (`p202501`) WHERE EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (JSON_CONTAINS(headgate_job_archive.tags, JSON_QUOTE(headgate_legal_hold.tag)) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job_archive.job_id)))

-- name: erasure.SQL_SELECT_ARCHIVED_COPIES --
-- Archived copies of listed jobs swept before their erasure (headgate_archive_job_idx).
SELECT archive_id, evicted_at_ms, errors FROM headgate_job_archive WHERE job_id IN (%s, %s, %s)

-- name: mysql.compliance.SQL_SELECT_ARCHIVE_MONTH_PAYLOADS --
-- One month's archived rows with their payloads, after a (evicted_at_ms, archive_id) cursor.
SELECT archive_id, evicted_at_ms, args, kwargs, result, errors FROM headgate_job_archive WHERE evicted_at_ms >= %s AND evicted_at_ms < %s AND (evicted_at_ms > %s OR (evicted_at_ms = %s AND archive_id > %s)) ORDER BY evicted_at_ms, archive_id LIMIT %s

-- name: erasure.SQL_SELECT_ENDED_JOBS --
-- Listed jobs an erasure waited for that have ended (primary key).
SELECT id, errors FROM headgate_job WHERE id IN (%s, %s, %s) AND state IN ('succeeded', 'dead', 'cancelled')

-- name: mysql.compliance.SQL_SELECT_ERASABLE_ARCHIVE --
-- Archived rows (every partition) carrying the tag, after a cursor, in archive_id order.
SELECT archive_id, evicted_at_ms, errors FROM headgate_job_archive WHERE JSON_CONTAINS(headgate_job_archive.tags, JSON_QUOTE(%s))  AND archive_id > %s ORDER BY archive_id LIMIT %s

-- name: mysql.compliance.SQL_SELECT_ERASABLE_HELD --
-- Held rows carrying the tag, after a cursor, in archive_id order.
SELECT archive_id, evicted_at_ms, errors FROM headgate_job_archive_held WHERE JSON_CONTAINS(headgate_job_archive_held.tags, JSON_QUOTE(%s))  AND archive_id > %s ORDER BY archive_id LIMIT %s

-- name: mysql.compliance.SQL_SELECT_ERASABLE_JOB --
-- Terminal hot rows carrying the tag, after a cursor, in primary-key order.
SELECT id, errors FROM headgate_job WHERE JSON_CONTAINS(headgate_job.tags, JSON_QUOTE(%s)) AND state IN ('succeeded', 'dead', 'cancelled') AND id > %s ORDER BY id LIMIT %s

-- name: mysql.compliance.SQL_SELECT_HOT_PAYLOADS --
-- Hot rows with their payloads, after a cursor (key rotation).
SELECT id, state, attempts, task, args, kwargs, result, progress, output, errors FROM headgate_job WHERE id > %s ORDER BY id LIMIT %s

-- name: erasure.SQL_SELECT_PRESENT_JOBS --
-- Listed jobs still in the hot table (primary key).
SELECT id FROM headgate_job WHERE id IN (%s, %s, %s)

-- name: mysql.compliance.SQL_SELECT_RELEASED_HELD_ROWS --
-- Held-table rows no unreleased hold covers any more (after a release), a batch of them.
SELECT archive_id FROM headgate_job_archive_held WHERE NOT EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND (JSON_CONTAINS(headgate_job_archive_held.tags, JSON_QUOTE(headgate_legal_hold.tag)) OR EXISTS (SELECT 1 FROM headgate_legal_hold_job WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id AND headgate_legal_hold_job.job_id = headgate_job_archive_held.job_id))) LIMIT %s

-- name: mysql.compliance.SQL_SELECT_UNFINISHED_TAGGED --
-- Hot rows carrying the tag that wait or run (erased when they end), a bounded list of ids.
SELECT id FROM headgate_job WHERE JSON_CONTAINS(headgate_job.tags, JSON_QUOTE(%s)) AND state NOT IN ('succeeded', 'dead', 'cancelled') LIMIT %s

-- name: mysql.compliance.SQL_UPDATE_ARCHIVE_PAYLOADS --
-- Rewrite one archived row's payloads (its key, so one partition).
UPDATE headgate_job_archive SET args = %s, kwargs = %s, result = %s, errors = %s WHERE archive_id = %s AND evicted_at_ms = %s

-- name: mysql.compliance.SQL_UPDATE_HOT_PAYLOADS --
-- Rewrite one hot row's payloads and fingerprint, guarded by its state and attempts.
UPDATE headgate_job SET args = %s, kwargs = %s, result = %s, progress = %s, output = %s, errors = %s, fingerprint = COALESCE(%s, fingerprint) WHERE id = %s AND (state = %s) IS NOT FALSE AND attempts = %s

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

-- name: mysql.SQL_GET_STATEMENT_BUDGET_MARIADB --
-- Lock waits in whole seconds: lock_wait_timeout for metadata and table locks, InnoDB's for rows.
-- MariaDB: max_statement_time in seconds (fractions allowed).
SELECT @@SESSION.max_statement_time, @@SESSION.lock_wait_timeout, @@SESSION.innodb_lock_wait_timeout

-- name: mysql.SQL_GET_STATEMENT_BUDGET_MYSQL --
-- MySQL 8: max_execution_time in milliseconds (SELECT statements only).
SELECT @@SESSION.max_execution_time, @@SESSION.lock_wait_timeout, @@SESSION.innodb_lock_wait_timeout

-- name: mysql.SQL_SET_STATEMENT_BUDGET_MARIADB --
-- Set (or restore) the three MariaDB session values.
SET SESSION max_statement_time = %s, lock_wait_timeout = %s, innodb_lock_wait_timeout = %s

-- name: mysql.SQL_SET_STATEMENT_BUDGET_MYSQL --
-- Set (or restore) the three MySQL session values.
SET SESSION max_execution_time = %s, lock_wait_timeout = %s, innodb_lock_wait_timeout = %s

-- name: mysql.archive_horizon.SQL_BOUNDED_COUNT --
-- Rows of one partition, counted up to a limit (%s: key, limit).
SELECT %s, (SELECT count(*) FROM (SELECT 1 FROM `headgate_job_archive` PARTITION (`p202501`) LIMIT %s) AS bounded)

-- name: mysql.archive_horizon.SQL_CATALOG --
-- The archive's partitions with their upper bounds, in range order.
SELECT PARTITION_NAME, PARTITION_DESCRIPTION FROM information_schema.PARTITIONS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s ORDER BY PARTITION_ORDINAL_POSITION

-- name: mysql.archive_horizon.SQL_DROP_PARTITION --
-- Retire an empty month.
ALTER TABLE `headgate_job_archive` DROP PARTITION `p202501`

-- name: mysql.archive_horizon.SQL_EDGE_DEFINITION --
-- The new after edge of a REORGANIZE.
PARTITION `p202501` VALUES LESS THAN MAXVALUE

-- name: mysql.archive_horizon.SQL_ESTIMATES --
-- InnoDB's row estimate of every partition (information_schema: no scan).
SELECT PARTITION_NAME, TABLE_ROWS FROM information_schema.PARTITIONS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s

-- name: mysql.archive_horizon.SQL_HAS_ROWS --
-- One row of a partition, if any ({partition}: a quoted partition name).
SELECT EXISTS (SELECT 1 FROM `headgate_job_archive` PARTITION (`p202501`))

-- name: mysql.archive_horizon.SQL_LOCK --
-- Hold the archive against writers while an empty month is dropped.
LOCK TABLES `headgate_job_archive` WRITE

-- name: mysql.archive_horizon.SQL_MONTH_DEFINITION --
-- One new month of a REORGANIZE.
PARTITION `p202501` VALUES LESS THAN (1738368000000)

-- name: mysql.archive_horizon.SQL_PRIVILEGES --
-- The connected account's privileges on the archive (global, schema, table level; not roles).
SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')
UNION SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES
      WHERE GRANTEE = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''') AND DATABASE() LIKE TABLE_SCHEMA
UNION SELECT PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES
      WHERE GRANTEE = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''') AND TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s

-- name: mysql.archive_horizon.SQL_REORGANIZE --
-- Extend: split the after edge into new months and a new edge, rows moved by the server.
ALTER TABLE `headgate_job_archive` REORGANIZE PARTITION `p_after_2031` INTO (PARTITION `p203201` VALUES LESS THAN (1959206400000), PARTITION `p_after_2032` VALUES LESS THAN MAXVALUE)

-- name: privileges_mysql.SQL_CURRENT_ROLE --
-- MariaDB's active role (NULL when none); MySQL answers in another format or not at all.
SELECT CURRENT_ROLE()

-- name: privileges_mysql.SQL_GLOBAL_PRIVILEGES --
-- Global grants of the account (and its role); IS_GRANTABLE is how GRANT OPTION shows.
SELECT PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE IN %s

-- name: privileges_mysql.SQL_PUBLIC_GRANTS --
-- What every account holds through MariaDB's PUBLIC (10.11+; information_schema hides it from
-- ordinary accounts, SHOW GRANTS does not). An error (MySQL, older MariaDB): nothing granted.
SHOW GRANTS FOR PUBLIC

-- name: privileges_mysql.SQL_SCHEMA_PRIVILEGES --
-- Database-level grants whose pattern matches this database (`db`.* or a wildcard grant).
SELECT PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE IN %s AND DATABASE() LIKE TABLE_SCHEMA

-- name: privileges_mysql.SQL_SESSION --
-- The connected account and database.
SELECT CURRENT_USER(), DATABASE()

-- name: privileges_mysql.SQL_SYSTEM_SCHEMA_PRIVILEGES --
-- Grants on the `mysql` system schema (accounts and their password hashes), at either level.
SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE IN %s AND 'mysql' LIKE TABLE_SCHEMA UNION SELECT PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE IN %s AND TABLE_SCHEMA = 'mysql'

-- name: privileges_mysql.SQL_TABLES --
-- Which Headgate tables exist (migrated).
SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN %s

-- name: privileges_mysql.SQL_TABLE_PRIVILEGES --
-- Table-level grants in this database.
SELECT TABLE_NAME, PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE IN %s AND TABLE_SCHEMA = DATABASE()
