"""Headgate's measurements, run in the project's virtualenv on one fresh database.

    python -m bench.headgate_bench --database-url URL --out FILE [sizes...]

1. single enqueue: ``django_headgate.enqueue`` in autocommit, one job per transaction;
2. bulk enqueue: ``django_headgate.enqueue_many([JobSpec(...)])`` of ``--bulk`` jobs per call;
3. drain: ``--drain`` no-op jobs by ONE ``headgate_worker --burst --concurrency 4`` process;
   rate = jobs / (max(finished_at) - min(started_at)) by the store clock, plus wall time. Run
   twice: first on a backlog the planner has no statistics for (``drain_cold``), then after
   ``ANALYZE`` (``drain``, the figure compared with the peers, which are analyzed too);
   Then (``--two-processes``) the same analysed backlog drained by TWO such processes started
   together (``drain_two``): the scaling of one process to two, in the same round;
4. latency: an idle worker already runs; jobs are enqueued one at a time, ``--spacing`` apart;
   latency = started_at - created_at (both written by the store clock);
5. PostgreSQL only, right after the bulk figure: the floor under it on this very table
   (``bulk_copy_same``): a raw psycopg ``COPY headgate_job (...)`` of the same rows into the same
   columns as enqueue_many's COPY (every index and trigger of the migrated table), then a NOTIFY,
   one transaction; median of ``--bulk-repetitions``, the table emptied before each;
6. ``--backlog-rows N`` (opt-in): N rows already succeeded (one server-side INSERT ... SELECT),
   ANALYZE, then ``--backlog-drain`` ready jobs by enqueue_many, ANALYZE, and the same drain as 3
   (``drain_backlog``; the finished rows have a task name of their own, out of the drain's window).
"""

import argparse
import json
import os
import sys
import time
import uuid

from bench.common import (
    DRAIN_TIMEOUT_S,
    LATENCY_SETTLE_TIMEOUT_S,
    READY_TIMEOUT_S,
    bench_env,
    BusySampler,
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

TASK = "bench.tasks.noop"
# The backlog case's finished rows: another task name keeps them out of the drain's window.
HISTORY_TASK = "bench.tasks.finished"
WARMUP_JOBS = 50

# The columns enqueue_many's COPY writes (django_headgate/store/postgresql/jobs.py), in its order.
SQL_COPY_SAME = (
    "COPY headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts, fence, "
    "unique_key, fingerprint, errors, tags, retention_class, created_at, timeout) FROM STDIN"
)
# Finished history: succeeded rows created one a millisecond from a day ago, kept 30 days (the
# sweep leaves them alone). {rows} is an int; the parameters are the payload of TEMPLATE_FIELDS.
SQLITE_AT = "strftime('%%Y-%%m-%%d %%H:%%M:%%f', t + {})"
HISTORY_COLUMNS = ("id, queue, task, args, kwargs, priority, max_attempts, fingerprint, tags, retention_class, "
                   "state, attempts, fence, result, errors, run_at, created_at, started_at, finished_at, expires_at")
SQL_HISTORY = {
    "postgresql": f"""
INSERT INTO headgate_job ({HISTORY_COLUMNS})
SELECT gen_random_uuid(), %s, %s, %s::jsonb, %s::jsonb, %s, %s, %s, %s::jsonb, %s,
       'succeeded', 1, 1, 'null', '[]', t, t, t + interval '1 ms', t + interval '2 ms', t + interval '30 days'
FROM (SELECT now() - interval '1 day' + n * interval '1 ms' AS t FROM generate_series(1, {{rows}}) AS n) AS s""",
    # MariaDB's SEQUENCE engine (seq_1_to_N); Django stores the UUID natively (MariaDB >= 10.7).
    "mysql": f"""
INSERT INTO headgate_job ({HISTORY_COLUMNS})
SELECT UUID(), %s, %s, %s, %s, %s, %s, %s, %s, %s,
       'succeeded', 1, 1, 'null', '[]', t, t, t + INTERVAL 1000 MICROSECOND, t + INTERVAL 2000 MICROSECOND,
       t + INTERVAL 30 DAY
FROM (SELECT UTC_TIMESTAMP(6) - INTERVAL 1 DAY + INTERVAL seq * 1000 MICROSECOND AS t FROM seq_1_to_{{rows}}) AS s""",
    # Django's SQLite UUIDs are 32 hex digits, its datetimes UTC text; t is a julianday() (days).
    "sqlite": f"""
WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < {{rows}})
INSERT INTO headgate_job ({HISTORY_COLUMNS})
SELECT lower(hex(randomblob(16))), %s, %s, %s, %s, %s, %s, %s, %s, %s,
       'succeeded', 1, 1, 'null', '[]', {SQLITE_AT.format("0")}, {SQLITE_AT.format("0")},
       {SQLITE_AT.format("1 / 86400000.0")}, {SQLITE_AT.format("2 / 86400000.0")}, {SQLITE_AT.format("30")}
FROM (SELECT julianday('now') - 1 + n / 86400000.0 AS t FROM seq) AS s""",
}
TEMPLATE_FIELDS = ("queue", "task", "args", "kwargs", "priority", "max_attempts", "fingerprint", "tags",
                   "retention_class")


def setup_django(database_url):
    os.environ["HG_BENCH_DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_headgate"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def clear_jobs():
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("TRUNCATE headgate_job")
        else:
            cursor.execute("DELETE FROM headgate_job")
            if connection.vendor == "sqlite":
                cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def count_jobs(state=None):
    from django_headgate.models import Job

    jobs = Job.objects.all()
    return jobs.filter(state=state).count() if state else jobs.count()


def measure_single(count):
    import django_headgate as headgate

    for _ in range(WARMUP_JOBS):
        headgate.enqueue(TASK)
    clear_jobs()
    _, seconds = timed(lambda: [headgate.enqueue(TASK) for _ in range(count)])
    assert count_jobs() == count
    clear_jobs()
    return {"jobs": count, "seconds": seconds, "jobs_per_s": rate(count, seconds)}


def measure_bulk(count, repetitions):
    """Median of ``repetitions`` calls; the jobs of the last call stay for the drain."""
    import django_headgate as headgate
    from django_headgate import JobSpec

    headgate.enqueue_many([JobSpec(TASK) for _ in range(WARMUP_JOBS)])
    runs = []
    for _ in range(repetitions):
        clear_jobs()
        specs = [JobSpec(TASK) for _ in range(count)]
        _, seconds = timed(headgate.enqueue_many, specs)
        runs.append(seconds)
    assert count_jobs() == count
    best = sorted(runs)[len(runs) // 2]
    return {"jobs": count, "seconds_each": runs, "jobs_per_s": rate(count, best)}


def load_backlog(count):
    clear_jobs()
    enqueue_ready(count)


def enqueue_ready(count):
    import django_headgate as headgate
    from django_headgate import JobSpec

    headgate.enqueue_many([JobSpec(TASK) for _ in range(count)])


def job_template():
    """TEMPLATE_FIELDS of the row enqueue_many writes for ``JobSpec(TASK)`` (JSON as text), read
    back from one such row; the table is left empty."""
    from django_headgate.models import Job

    load_backlog(1)
    values = dict(zip(TEMPLATE_FIELDS, Job.objects.values_list(*TEMPLATE_FIELDS).get()))
    clear_jobs()
    return {key: json.dumps(value) if key in ("args", "kwargs", "tags") else value for key, value in values.items()}


def copy_same_rows(connection, count, template):
    """One transaction: COPY ``count`` rows as enqueue_many writes them, stamped with the
    transaction's now(), then the NOTIFY enqueue_many sends."""
    t = template
    with connection.transaction():
        now = connection.execute("SELECT now()").fetchone()[0]
        with connection.cursor().copy(SQL_COPY_SAME) as copy:
            for _ in range(count):
                copy.write_row((uuid.uuid4(), t["queue"], t["task"], t["args"], t["kwargs"], t["priority"],
                                "available", now, 0, t["max_attempts"], 0, None, t["fingerprint"], "[]", t["tags"],
                                t["retention_class"], now, None))
        connection.execute("SELECT pg_notify('headgate_jobs', '')")


def measure_copy_same(database_url, count, repetitions):
    """The floor under the bulk figure on PostgreSQL: raw psycopg, same rows, same table, timed
    the same way (median of ``repetitions``, the table emptied before each); leaves it empty."""
    import psycopg

    template = job_template()
    runs = []
    with psycopg.connect(database_url, autocommit=True) as connection:
        for _ in range(repetitions):
            clear_jobs()
            runs.append(timed(copy_same_rows, connection, count, template)[1])
    assert count_jobs() == count
    clear_jobs()
    best = sorted(runs)[len(runs) // 2]
    return {"jobs": count, "seconds_each": runs, "jobs_per_s": rate(count, best)}


def insert_history(rows):
    """``rows`` succeeded jobs of the past day, written by one server-side INSERT ... SELECT."""
    from django.db import connection

    template = {**job_template(), "task": HISTORY_TASK}
    with connection.cursor() as cursor:
        cursor.execute(SQL_HISTORY[connection.vendor].format(rows=int(rows)), [template[f] for f in TEMPLATE_FIELDS])


def measure_backlog(rows, count, concurrency, env):
    """``count`` ready jobs behind ``rows`` finished ones, drained as in measure_drain."""
    _, seconds = timed(insert_history, rows)
    analyze_jobs()
    enqueue_ready(count)
    analyze_jobs()
    drain = measure_drain(count, concurrency, env)
    return {**drain, "finished_rows": rows, "finished_insert_seconds": seconds}


def worker_cmd(*args):
    return [sys.executable, "-m", "django", "headgate_worker", "--no-progress", *args]


def drain_window():
    """(first start, last finish, succeeded count) of the jobs drained (not the finished history
    of the backlog case, HISTORY_TASK), by the store clock."""
    from django.db.models import Count, Max, Min, Q

    from django_headgate.models import Job

    return Job.objects.exclude(task=HISTORY_TASK).aggregate(first=Min("started_at"), last=Max("finished_at"),
                                 succeeded=Count("id", filter=Q(state="succeeded")))


def analyze_jobs():
    """Refresh the planner's statistics of headgate_job, as autovacuum does within a minute."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute({"postgresql": "ANALYZE headgate_job", "mysql": "ANALYZE TABLE headgate_job",
                        "sqlite": "ANALYZE"}[connection.vendor])


def measure_drain(count, concurrency, env):
    from django.db import connection

    connection.close()  # the worker subprocess must not share anything with us
    cpu_before = children_cpu_seconds()
    with BusySampler() as busy:
        wall = run_to_end(worker_cmd("--burst", "--concurrency", str(concurrency)), env, DRAIN_TIMEOUT_S)
    return drain_result(count, concurrency, wall, children_cpu_seconds() - cpu_before, busy)


def drain_result(count, concurrency, wall, cpu, busy, **extra):
    """The figures of a drain just run: rate by the store clock (first start to last finish),
    the workers' CPU per job, and the machine's busy cores in that window (``busy``: the
    BusySampler that ran during it)."""
    window = drain_window()
    seconds = (window["last"] - window["first"]).total_seconds()
    return {
        "jobs": count, "succeeded": window["succeeded"], "concurrency": concurrency, **extra,
        "db_seconds": seconds, "jobs_per_s": rate(window["succeeded"], seconds), "wall_seconds": wall,
        "worker_cpu_ms_per_job": cpu * 1000 / count,
        "machine_busy_cores": busy.cores_between(window["first"].timestamp(), window["last"].timestamp()),
    }


def measure_drain_two(count, concurrency, env):
    """The backlog drained by two worker processes at once; rate by the store clock."""
    from django.db import connection

    connection.close()
    cpu_before = children_cpu_seconds()
    started = time.perf_counter()
    with BusySampler() as busy:
        workers = [start_background(worker_cmd("--burst", "--concurrency", str(concurrency)), env) for _ in range(2)]
        try:
            codes = [worker.wait(timeout=DRAIN_TIMEOUT_S) for worker in workers]
        finally:
            for worker in workers:
                stop_background(worker)
    wall = time.perf_counter() - started
    if any(codes):
        raise RuntimeError(f"two-process drain: exit statuses {codes}")
    return drain_result(count, concurrency, wall, children_cpu_seconds() - cpu_before, busy, processes=2)


def measure_latency(samples, spacing, concurrency, env):
    import django_headgate as headgate
    from django_headgate.models import Job, WorkerHeartbeat

    clear_jobs()
    worker = start_background(worker_cmd("--concurrency", str(concurrency)), env)
    try:
        wait_until(lambda: WorkerHeartbeat.objects.exists(), READY_TIMEOUT_S, what="worker heartbeat")
        warmup = [headgate.enqueue(TASK).id for _ in range(5)]
        wait_until(lambda: Job.objects.filter(id__in=warmup, state="succeeded").count() == 5,
                   READY_TIMEOUT_S, what="warm-up jobs")
        ids = [headgate.enqueue(TASK).id for _ in paced(samples, spacing)]
        wait_until(lambda: Job.objects.filter(id__in=ids, started_at__isnull=False).count() == samples,
                   LATENCY_SETTLE_TIMEOUT_S, what="latency jobs to start")
    finally:
        stop_background(worker)
    rows = Job.objects.filter(id__in=ids).values_list("created_at", "started_at")
    return latency_summary([(started - created).total_seconds() for created, started in rows])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--single", type=int, default=2000)
    parser.add_argument("--bulk", type=int, default=10000)
    parser.add_argument("--bulk-repetitions", type=int, default=3)
    parser.add_argument("--drain", type=int, default=10000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--latency-samples", type=int, default=200)
    parser.add_argument("--spacing", type=float, default=0.02)
    parser.add_argument("--two-processes", action="store_true",
                        help="Also drain the backlog with two worker processes at once.")
    parser.add_argument("--backlog-rows", type=int, default=0,
                        help="Also drain --backlog-drain jobs behind this many succeeded rows (0: skip).")
    parser.add_argument("--backlog-drain", type=int, default=200000)
    args = parser.parse_args()

    setup_django(args.database_url)
    import django
    from django.db import connection

    env = bench_env(HG_BENCH_DATABASE_URL=args.database_url, DJANGO_SETTINGS_MODULE="bench.settings_headgate")
    result = {"system": "headgate", "vendor": connection.vendor, "django": django.get_version()}
    clear_jobs()
    log(f"headgate/{connection.vendor}: single enqueue x{args.single}")
    result["single_enqueue"] = measure_single(args.single)
    log(f"headgate/{connection.vendor}: enqueue_many x{args.bulk} ({args.bulk_repetitions} calls)")
    result["bulk_enqueue"] = measure_bulk(args.bulk, args.bulk_repetitions)
    if connection.vendor == "postgresql":
        log(f"headgate/postgresql: raw COPY of the same rows into headgate_job x{args.bulk}")
        result["bulk_copy_same"] = measure_copy_same(args.database_url, args.bulk, args.bulk_repetitions)
    if args.drain != args.bulk or "bulk_copy_same" in result:
        load_backlog(args.drain)
    log(f"headgate/{connection.vendor}: drain {args.drain} jobs (backlog not analyzed), one worker, "
        f"concurrency {args.concurrency}")
    result["drain_cold"] = measure_drain(args.drain, args.concurrency, env)
    load_backlog(args.drain)
    analyze_jobs()
    log(f"headgate/{connection.vendor}: drain {args.drain} jobs (after ANALYZE)")
    result["drain"] = measure_drain(args.drain, args.concurrency, env)
    if args.two_processes:
        load_backlog(args.drain)
        analyze_jobs()
        log(f"headgate/{connection.vendor}: drain {args.drain} jobs (after ANALYZE), two worker processes")
        result["drain_two"] = measure_drain_two(args.drain, args.concurrency, env)
    log(f"headgate/{connection.vendor}: latency, {args.latency_samples} samples {args.spacing * 1000:.0f} ms apart")
    result["latency"] = measure_latency(args.latency_samples, args.spacing, args.concurrency, env)
    if args.backlog_rows:
        log(f"headgate/{connection.vendor}: drain {args.backlog_drain} jobs behind {args.backlog_rows} "
            "succeeded rows (after ANALYZE)")
        result["drain_backlog"] = measure_backlog(args.backlog_rows, args.backlog_drain, args.concurrency, env)
    clear_jobs()
    emit(result, args.out)


if __name__ == "__main__":
    main()
