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
   latency = started_at - created_at (both written by the store clock).
"""

import argparse
import os
import sys
import time

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
WARMUP_JOBS = 50


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
    import django_headgate as headgate
    from django_headgate import JobSpec

    clear_jobs()
    headgate.enqueue_many([JobSpec(TASK) for _ in range(count)])


def worker_cmd(*args):
    return [sys.executable, "-m", "django", "headgate_worker", "--no-progress", *args]


def drain_window():
    """(first start, last finish, succeeded count) of the jobs, by the store clock."""
    from django.db.models import Count, Max, Min, Q

    from django_headgate.models import Job

    return Job.objects.aggregate(first=Min("started_at"), last=Max("finished_at"),
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
    if args.drain != args.bulk:
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
    clear_jobs()
    emit(result, args.out)


if __name__ == "__main__":
    main()
