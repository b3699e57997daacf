"""Procrastinate's measurements (peer), run in bench/.venv-peers on its own fresh database.

    PROCRASTINATE_BENCH_DSN=DSN python -m bench.procrastinate_bench measure --out FILE [sizes...]
    python -m bench.procrastinate_bench worker [--burst] --concurrency 4     (spawned by measure)

Same four measurements as Headgate's: ``noop.defer()`` one job per transaction, ``batch_defer``,
a drain by one ``app.run_worker(concurrency=4, wait=False)`` process, and enqueue->start latency
with an idle worker (LISTEN/NOTIFY on, its default). Times come from ``procrastinate_events``
(``at`` defaults to the database's now()): drain = first 'started' .. last 'succeeded';
latency = 'started' - 'deferred' of each job.
"""

import argparse
import os
import sys

import procrastinate

from bench.common import (
    DRAIN_TIMEOUT_S,
    LATENCY_SETTLE_TIMEOUT_S,
    READY_TIMEOUT_S,
    bench_env,
    children_cpu_seconds,
    emit,
    latency_summary,
    log,
    paced,
    rate,
    run_to_end,
    start_background,
    stop_background,
    timed,
    wait_until,
)

from bench.procrastinate_app import app, noop

WARMUP_JOBS = 50


def sql(query, params=None):
    """One statement on a short-lived connection of our own (outside Procrastinate's pool)."""
    import psycopg

    with psycopg.connect(os.environ["PROCRASTINATE_BENCH_DSN"], autocommit=True) as connection:
        cursor = connection.execute(query, params)
        return cursor.fetchall() if cursor.description else None


def clear_jobs():
    sql("TRUNCATE procrastinate_jobs, procrastinate_events, procrastinate_workers RESTART IDENTITY CASCADE")


def measure_single(count):
    for _ in range(WARMUP_JOBS):
        noop.defer()
    clear_jobs()
    _, seconds = timed(lambda: [noop.defer() for _ in range(count)])
    return {"jobs": count, "seconds": seconds, "jobs_per_s": rate(count, seconds)}


def measure_bulk(count, repetitions):
    noop.batch_defer(*[{} for _ in range(WARMUP_JOBS)])
    runs = []
    for _ in range(repetitions):
        clear_jobs()
        kwargs = [{} for _ in range(count)]
        _, seconds = timed(noop.batch_defer, *kwargs)
        runs.append(seconds)
    best = sorted(runs)[len(runs) // 2]
    return {"jobs": count, "seconds_each": runs, "jobs_per_s": rate(count, best)}


def worker_cmd(*args):
    return [sys.executable, "-m", "bench.procrastinate_bench", "worker", *args]


def measure_drain(count, concurrency, env):
    cpu_before = children_cpu_seconds()
    wall = run_to_end(worker_cmd("--burst", "--concurrency", str(concurrency)), env, DRAIN_TIMEOUT_S)
    cpu = children_cpu_seconds() - cpu_before
    (first, last), = sql("""
        SELECT min(at) FILTER (WHERE type = 'started'), max(at) FILTER (WHERE type = 'succeeded')
        FROM procrastinate_events""")
    (succeeded,), = sql("SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'")
    seconds = (last - first).total_seconds()
    return {
        "jobs": count, "succeeded": succeeded, "concurrency": concurrency,
        "db_seconds": seconds, "jobs_per_s": rate(succeeded, seconds), "wall_seconds": wall,
        "worker_cpu_ms_per_job": cpu * 1000 / count,
    }


def started_count(ids):
    (count,), = sql("SELECT count(*) FROM procrastinate_events WHERE type = 'started' AND job_id = ANY(%s)",
                    [ids])
    return count


def measure_latency(samples, spacing, concurrency, env):
    clear_jobs()
    worker = start_background(worker_cmd("--concurrency", str(concurrency)), env)
    try:
        wait_until(lambda: sql("SELECT 1 FROM procrastinate_workers"), READY_TIMEOUT_S, what="worker row")
        warmup = [noop.defer() for _ in range(5)]
        wait_until(lambda: started_count(warmup) == 5, READY_TIMEOUT_S, what="warm-up jobs")
        ids = [noop.defer() for _ in paced(samples, spacing)]
        wait_until(lambda: started_count(ids) == samples, LATENCY_SETTLE_TIMEOUT_S, what="latency jobs to start")
    finally:
        stop_background(worker)
    rows = sql("""
        SELECT extract(epoch FROM s.at - d.at)
        FROM procrastinate_events d JOIN procrastinate_events s ON s.job_id = d.job_id
        WHERE d.type = 'deferred' AND s.type = 'started' AND d.job_id = ANY(%s)""", [ids])
    return latency_summary([float(row[0]) for row in rows])


def run_worker(args):
    app.run_worker(concurrency=args.concurrency, wait=not args.burst)


def measure(args):
    env = bench_env()
    with app.open():
        app.schema_manager.apply_schema()
        result = {"system": "procrastinate", "version": procrastinate.__version__, "vendor": "postgresql"}
        log(f"procrastinate: single defer x{args.single}")
        result["single_enqueue"] = measure_single(args.single)
        log(f"procrastinate: batch_defer x{args.bulk} ({args.bulk_repetitions} calls)")
        result["bulk_enqueue"] = measure_bulk(args.bulk, args.bulk_repetitions)
        if args.drain != args.bulk:
            clear_jobs()
            noop.batch_defer(*[{} for _ in range(args.drain)])
        sql("ANALYZE procrastinate_jobs")  # as Headgate's drain: statistics that know the backlog
        log(f"procrastinate: drain {args.drain} jobs, one worker, concurrency {args.concurrency}")
        result["drain"] = measure_drain(args.drain, args.concurrency, env)
        log(f"procrastinate: latency, {args.latency_samples} samples {args.spacing * 1000:.0f} ms apart")
        result["latency"] = measure_latency(args.latency_samples, args.spacing, args.concurrency, env)
    emit(result, args.out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    worker = commands.add_parser("worker")
    worker.add_argument("--burst", action="store_true")
    worker.add_argument("--concurrency", type=int, default=4)
    bench = commands.add_parser("measure")
    bench.add_argument("--out", required=True)
    bench.add_argument("--single", type=int, default=2000)
    bench.add_argument("--bulk", type=int, default=10000)
    bench.add_argument("--bulk-repetitions", type=int, default=3)
    bench.add_argument("--drain", type=int, default=10000)
    bench.add_argument("--concurrency", type=int, default=4)
    bench.add_argument("--latency-samples", type=int, default=200)
    bench.add_argument("--spacing", type=float, default=0.02)
    args = parser.parse_args()
    if args.command == "worker":
        run_worker(args)
    else:
        measure(args)


if __name__ == "__main__":
    main()
