"""The raw-SQL floor: psycopg 3 directly on a table shaped like ``headgate_job`` (same columns,
same claim index), one process, one connection in autocommit, its own fresh database.

    RAWSQL_BENCH_DSN=DSN python -m bench.rawsql_bench --out FILE [sizes...]

- single insert: one INSERT per transaction; and one INSERT that also queues a NOTIFY, in one
  statement per transaction (``single_enqueue_notify``: the floor under single enqueue, which
  wakes idle workers the same way);
- bulk insert: multi-row INSERTs of 1,000 rows in one transaction; and a ``COPY`` of the same
  rows with the columns Headgate's ``enqueue_many`` writes, one transaction, then a NOTIFY
  (``bulk_copy``: the floor under enqueue_many);
- drain, claim 1: ``UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING``
  then a fenced ``UPDATE`` acknowledging that job: two statements per job;
- drain, claim 50: the same with ``LIMIT 50`` and one fenced ``UPDATE ... FROM unnest(...)``
  acknowledging the 50: two statements per 50 jobs; then the same analysed backlog drained by two
  such loops in two processes started together (``drain_claim_50_two``, with ``two_vs_one``: its
  rate over the one-process rate just measured);
- two-column COPY (``bulk_copy2``): the same COPY transaction into a table of only
  ``(id uuid PRIMARY KEY, payload jsonb)``, the least a queue's bulk insert can write;
- LISTEN/NOTIFY latency (``latency_listen``): a listener process claims one job (``started_at =
  clock_timestamp()``) and acknowledges it on each notification, while this process inserts one
  job + NOTIFY per transaction, ``--spacing`` apart; latency = started_at - created_at.
Each one-process drain also reports the claim statements alone (``claim_only_jobs_per_s``). No
task runs.
"""

import argparse
import multiprocessing
import os
import time
import uuid

import psycopg

from bench.common import (
    DRAIN_TIMEOUT_S,
    LATENCY_SETTLE_TIMEOUT_S,
    READY_TIMEOUT_S,
    STOP_TIMEOUT_S,
    emit,
    latency_summary,
    log,
    measure_raw_drain,
    paced,
    rate,
    timed,
    wait_until,
)

# A table shaped like headgate_job, with its claim index.
SQL_CREATE = """
DROP TABLE IF EXISTS raw_job;
CREATE TABLE raw_job (
    id uuid PRIMARY KEY, queue varchar(64) NOT NULL, task varchar(255) NOT NULL,
    args jsonb NOT NULL, kwargs jsonb NOT NULL, priority smallint NOT NULL,
    state varchar(16) NOT NULL, run_at timestamptz NOT NULL, attempts integer NOT NULL,
    max_attempts integer NOT NULL, lease_owner varchar(200), lease_expires_at timestamptz,
    fence bigint NOT NULL, unique_key varchar(255) UNIQUE, fingerprint varchar(64) NOT NULL,
    progress jsonb, result jsonb, output text, errors jsonb NOT NULL, tags jsonb NOT NULL,
    retention_class varchar(100) NOT NULL, created_at timestamptz NOT NULL,
    started_at timestamptz, finished_at timestamptz, expires_at timestamptz
);
CREATE INDEX raw_job_claim_any_idx ON raw_job (state, priority DESC, run_at);
CREATE INDEX raw_job_expires_idx ON raw_job (expires_at);
DROP TABLE IF EXISTS raw_copy2;
CREATE TABLE raw_copy2 (id uuid PRIMARY KEY, payload jsonb NOT NULL);
"""
ROW = ("(%s, 'default', 'bench.tasks.noop', '[]', '{}', 0, 'available', now(), 0, 3, NULL, NULL, 0, "
       "NULL, %s, NULL, NULL, NULL, '[]', '[]', 'standard_30d', now(), NULL, NULL, NULL)")
SQL_INSERT_HEAD = "INSERT INTO raw_job VALUES "
# One INSERT that queues a NOTIFY for its commit, in one statement (one round trip).
SQL_INSERT_NOTIFY = (
    "WITH inserted AS (" + SQL_INSERT_HEAD + ROW + " RETURNING queue) "
    "SELECT pg_notify('raw_jobs', queue) FROM inserted"
)
# COPY of the columns enqueue_many's COPY writes (the others take their defaults: NULL).
COPY_COLUMNS = ("id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts, fence, "
                "unique_key, fingerprint, errors, tags, retention_class, created_at")
SQL_COPY = f"COPY raw_job ({COPY_COLUMNS}) FROM STDIN"
SQL_COPY2 = "COPY raw_copy2 (id, payload) FROM STDIN"
PAYLOAD = '{"task": "bench.tasks.noop", "args": [], "kwargs": {}}'
FINGERPRINT = "0" * 64
INSERT_BATCH_ROWS = 1000

# Claim up to N ready jobs, skipping rows other workers hold; lease them and bump the fence.
CLAIM_ONE = """
UPDATE raw_job SET state = 'running', attempts = attempts + 1, fence = fence + 1,
    lease_owner = 'raw', lease_expires_at = now() + interval '30 seconds', started_at = {started}
WHERE id = (SELECT id FROM raw_job WHERE state = 'available' AND run_at <= now()
            ORDER BY priority DESC, run_at LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id, fence
"""
SQL_CLAIM_ONE = CLAIM_ONE.format(started="now()")
# The listener's claim: the real time of the start, not its statement's.
SQL_CLAIM_ONE_CLOCK = CLAIM_ONE.format(started="clock_timestamp()")
SQL_CLAIM_MANY = """
UPDATE raw_job AS j SET state = 'running', attempts = j.attempts + 1, fence = j.fence + 1,
    lease_owner = 'raw', lease_expires_at = now() + interval '30 seconds', started_at = now()
FROM (SELECT id FROM raw_job WHERE state = 'available' AND run_at <= now()
      ORDER BY priority DESC, run_at LIMIT %s FOR UPDATE SKIP LOCKED) AS picked
WHERE j.id = picked.id
RETURNING j.id, j.fence
"""
# Fenced acknowledgements.
SQL_ACK_ONE = """
UPDATE raw_job SET state = 'succeeded', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL
WHERE id = %s AND fence = %s AND state = 'running'
"""
SQL_ACK_MANY = """
UPDATE raw_job AS j SET state = 'succeeded', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL
FROM unnest(%s::uuid[], %s::bigint[]) AS done(id, fence)
WHERE j.id = done.id AND j.fence = done.fence AND j.state = 'running'
"""


def insert_many(connection, count):
    with connection.transaction():
        for start in range(0, count, INSERT_BATCH_ROWS):
            rows = min(INSERT_BATCH_ROWS, count - start)
            params = []
            for _ in range(rows):
                params += [uuid.uuid4(), FINGERPRINT]
            connection.execute(SQL_INSERT_HEAD + ", ".join([ROW] * rows), params)


def measure_single(connection, count):
    def run():
        for _ in range(count):
            connection.execute(SQL_INSERT_HEAD + ROW, [uuid.uuid4(), FINGERPRINT])

    _, seconds = timed(run)
    connection.execute("TRUNCATE raw_job")
    return {"jobs": count, "seconds": seconds, "jobs_per_s": rate(count, seconds)}


def measure_single_notify(connection, count):
    def run():
        for _ in range(count):
            connection.execute(SQL_INSERT_NOTIFY, [uuid.uuid4(), FINGERPRINT]).fetchall()

    _, seconds = timed(run)
    connection.execute("TRUNCATE raw_job")
    return {"jobs": count, "seconds": seconds, "jobs_per_s": rate(count, seconds)}


def copy_many(connection, count):
    """COPY ``count`` rows in one transaction, stamped with its now(), then NOTIFY."""
    with connection.transaction():
        now = connection.execute("SELECT now()").fetchone()[0]
        with connection.cursor().copy(SQL_COPY) as copy:
            for _ in range(count):
                copy.write_row((uuid.uuid4(), "default", "bench.tasks.noop", "[]", "{}", 0, "available", now,
                                0, 3, 0, None, FINGERPRINT, "[]", "[]", "standard_30d", now))
        connection.execute("SELECT pg_notify('raw_jobs', '')")


def copy_payloads(connection, count):
    """copy_many into the two-column table."""
    with connection.transaction():
        with connection.cursor().copy(SQL_COPY2) as copy:
            for _ in range(count):
                copy.write_row((uuid.uuid4(), PAYLOAD))
        connection.execute("SELECT pg_notify('raw_jobs', '')")


def measure_copy(connection, count, repetitions=3, copy=copy_many, table="raw_job"):
    """Median of ``repetitions`` COPYs (as Headgate's bulk figure), the table emptied before each."""
    runs = []
    for _ in range(repetitions):
        connection.execute(f"TRUNCATE {table}")
        runs.append(timed(copy, connection, count)[1])
    connection.execute(f"TRUNCATE {table}")
    best = sorted(runs)[len(runs) // 2]
    return {"jobs": count, "seconds_each": runs, "jobs_per_s": rate(count, best)}


def measure_bulk(connection, count):
    _, seconds = timed(insert_many, connection, count)
    connection.execute("TRUNCATE raw_job")
    return {"jobs": count, "seconds": seconds, "jobs_per_s": rate(count, seconds)}


def drain(connection, batch, acknowledge):
    """Claim (and acknowledge) until no job is left; return (jobs, seconds)."""
    done = 0

    def run():
        nonlocal done
        while True:
            if batch == 1:
                rows = connection.execute(SQL_CLAIM_ONE).fetchall()
            else:
                rows = connection.execute(SQL_CLAIM_MANY, [batch]).fetchall()
            if not rows:
                return
            done += len(rows)
            if acknowledge and batch == 1:
                connection.execute(SQL_ACK_ONE, rows[0])
            elif acknowledge:
                connection.execute(SQL_ACK_MANY, [[row[0] for row in rows], [row[1] for row in rows]])

    _, seconds = timed(run)
    return done, seconds


def measure_drain(connection, count, batch):
    return measure_raw_drain(connection.execute, lambda n: insert_many(connection, n),
                             lambda size, acknowledge: drain(connection, size, acknowledge),
                             count, batch, "ANALYZE raw_job")


def drain_process(dsn, batch, barrier, results):
    """One process of the two-process drain: its own connection, the loop of drain() once the
    parent releases the barrier; puts (jobs, perf_counter at its end: CLOCK_MONOTONIC, one clock
    for every process)."""
    with psycopg.connect(dsn, autocommit=True) as connection:
        barrier.wait(timeout=READY_TIMEOUT_S)
        done, _ = drain(connection, batch, True)
        results.put((done, time.perf_counter()))


def measure_drain_two(connection, dsn, count, batch):
    """The analysed backlog drained by two processes started together (connected first);
    rate = jobs / (release of the barrier to the last process's end)."""
    connection.execute("TRUNCATE raw_job")
    insert_many(connection, count)
    connection.execute("ANALYZE raw_job")
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(3), context.Queue()
    processes = [context.Process(target=drain_process, args=(dsn, batch, barrier, results)) for _ in range(2)]
    for process in processes:
        process.start()
    try:
        barrier.wait(timeout=READY_TIMEOUT_S)
        started = time.perf_counter()
        ends = [results.get(timeout=DRAIN_TIMEOUT_S) for _ in processes]
    finally:
        for process in processes:
            process.join(STOP_TIMEOUT_S)
    done = sum(jobs for jobs, _ in ends)
    assert done == count, (done, count)
    seconds = max(end for _, end in ends) - started
    connection.execute("TRUNCATE raw_job")
    return {"jobs": count, "claim_per_statement": batch, "processes": 2, "per_process": [jobs for jobs, _ in ends],
            "seconds": seconds, "jobs_per_s": rate(done, seconds)}


def listen_process(dsn, ready, stop):
    """The LISTEN/NOTIFY floor's worker: on each notification, claim one job and acknowledge it."""
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute("LISTEN raw_jobs")
        ready.set()
        while not stop.is_set():
            # list(): the generator holds the connection until it ends.
            for _ in list(connection.notifies(timeout=0.1, stop_after=1)):
                row = connection.execute(SQL_CLAIM_ONE_CLOCK).fetchone()
                if row:
                    connection.execute(SQL_ACK_ONE, row)


def enqueue_notify(connection, count, spacing):
    """Insert ``count`` jobs one per transaction with their NOTIFY, ``spacing`` apart; their ids."""
    ids = [uuid.uuid4() for _ in range(count)]
    for index in paced(count, spacing):
        connection.execute(SQL_INSERT_NOTIFY, [ids[index], FINGERPRINT]).fetchall()
    return ids


def started_count(connection, ids):
    sql = "SELECT count(*) FROM raw_job WHERE id = ANY(%s) AND started_at IS NOT NULL"
    return connection.execute(sql, [ids]).fetchone()[0]


def measure_listen_latency(connection, dsn, samples, spacing):
    """Latency = started_at - created_at of ``samples`` jobs, both written by the database, after
    5 warm-up jobs (as Headgate's latency figure)."""
    connection.execute("TRUNCATE raw_job")
    context = multiprocessing.get_context("spawn")
    ready, stop = context.Event(), context.Event()
    listener = context.Process(target=listen_process, args=(dsn, ready, stop))
    listener.start()
    try:
        if not ready.wait(READY_TIMEOUT_S):
            raise TimeoutError("the listener did not start")
        warmup = enqueue_notify(connection, 5, spacing)
        wait_until(lambda: started_count(connection, warmup) == 5, READY_TIMEOUT_S, what="warm-up jobs")
        ids = enqueue_notify(connection, samples, spacing)
        wait_until(lambda: started_count(connection, ids) == samples, LATENCY_SETTLE_TIMEOUT_S,
                   what="latency jobs to start")
    finally:
        stop.set()
        listener.join(STOP_TIMEOUT_S)
    rows = connection.execute("SELECT extract(epoch FROM started_at - created_at) FROM raw_job WHERE id = ANY(%s)",
                              [ids]).fetchall()
    connection.execute("TRUNCATE raw_job")
    return latency_summary([float(seconds) for seconds, in rows])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--single", type=int, default=2000)
    parser.add_argument("--bulk", type=int, default=10000)
    parser.add_argument("--drain", type=int, default=10000)
    parser.add_argument("--latency-samples", type=int, default=200)
    parser.add_argument("--spacing", type=float, default=0.02)
    args = parser.parse_args()
    dsn = os.environ["RAWSQL_BENCH_DSN"]
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(SQL_CREATE)
        result = {"system": "raw-sql", "vendor": "postgresql", "psycopg": psycopg.__version__}
        log(f"raw SQL: single insert (and insert + NOTIFY) x{args.single}, bulk insert and COPY x{args.bulk}")
        result["single_enqueue"] = measure_single(connection, args.single)
        result["single_enqueue_notify"] = measure_single_notify(connection, args.single)
        result["bulk_enqueue"] = measure_bulk(connection, args.bulk)
        result["bulk_copy"] = measure_copy(connection, args.bulk)
        result["bulk_copy2"] = measure_copy(connection, args.bulk, copy=copy_payloads, table="raw_copy2")
        log(f"raw SQL: drain {args.drain} jobs claiming 1 per statement, then 50 per statement (1 and 2 processes)")
        result["drain_claim_1"] = measure_drain(connection, args.drain, 1)
        result["drain_claim_50"] = measure_drain(connection, args.drain, 50)
        two = measure_drain_two(connection, dsn, args.drain, 50)
        two["two_vs_one"] = two["jobs_per_s"] / result["drain_claim_50"]["jobs_per_s"]
        result["drain_claim_50_two"] = two
        log(f"raw SQL: LISTEN/NOTIFY latency, {args.latency_samples} samples {args.spacing * 1000:.0f} ms apart")
        result["latency_listen"] = measure_listen_latency(connection, dsn, args.latency_samples, args.spacing)
    emit(result, args.out)


if __name__ == "__main__":
    main()
