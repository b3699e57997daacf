"""django-tasks' DatabaseBackend measurements (peer: the ``django-tasks-db`` package), run in
bench/.venv-peers on its own fresh database.

    DJTASKS_BENCH_DATABASE_URL=URL python -m bench.djtasks_bench --out FILE [sizes...]

``noop.enqueue()`` one job per transaction; no bulk API exists (reported as n/a); a drain by ONE
``manage.py db_worker --batch`` process (it runs one task at a time: it has no concurrency
option); latency with an idle ``db_worker`` at its default 1 s polling interval. Its timestamps
(enqueued_at, started_at, finished_at) are written from the host clock by Django, not the
database: on one machine that is the same clock.
"""

import argparse
import os
import sys

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

WARMUP_JOBS = 50
# Time an idle db_worker is given to start polling before the first latency sample.
WORKER_START_S = 3.0


def setup_django():
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_djtasks"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def clear_jobs():
    from django.db import connection
    from django_tasks_db.models import DBTaskResult

    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {connection.ops.quote_name(DBTaskResult._meta.db_table)}")


def task_rows():
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.all()


def enqueue_one():
    from bench.djtasks_tasks import noop

    return noop.enqueue().id


def measure_single(count):
    for _ in range(WARMUP_JOBS):
        enqueue_one()
    clear_jobs()
    _, seconds = timed(lambda: [enqueue_one() for _ in range(count)])
    clear_jobs()
    return {"jobs": count, "seconds": seconds, "jobs_per_s": rate(count, seconds)}


def worker_cmd(*args):
    return [sys.executable, "-m", "django", "db_worker", "--no-startup-delay", "--verbosity", "0", *args]


def measure_drain(count, env):
    from django.db import connection
    from django.db.models import Count, Max, Min, Q

    from bench.djtasks_tasks import noop

    clear_jobs()
    for _ in range(count):
        noop.enqueue()
    with connection.cursor() as cursor:  # as Headgate's drain: statistics that know the backlog
        cursor.execute(f"ANALYZE {connection.ops.quote_name(task_rows().model._meta.db_table)}")
    connection.close()
    cpu_before = children_cpu_seconds()
    wall = run_to_end(worker_cmd("--batch"), env, DRAIN_TIMEOUT_S)
    cpu = children_cpu_seconds() - cpu_before
    window = task_rows().aggregate(first=Min("started_at"), last=Max("finished_at"),
                                   succeeded=Count("id", filter=Q(status="SUCCESSFUL")))
    seconds = (window["last"] - window["first"]).total_seconds()
    return {
        "jobs": count, "succeeded": window["succeeded"], "concurrency": 1,
        "db_seconds": seconds, "jobs_per_s": rate(window["succeeded"], seconds), "wall_seconds": wall,
        "worker_cpu_ms_per_job": cpu * 1000 / count,
    }


def started_count(ids):
    return task_rows().filter(id__in=ids, started_at__isnull=False).count()


def measure_latency(samples, spacing, env):
    import time

    clear_jobs()
    worker = start_background(worker_cmd(), env)
    try:
        time.sleep(WORKER_START_S)
        warmup = [enqueue_one() for _ in range(5)]
        wait_until(lambda: started_count(warmup) == 5, READY_TIMEOUT_S, what="warm-up jobs")
        ids = [enqueue_one() for _ in paced(samples, spacing)]
        wait_until(lambda: started_count(ids) == samples, LATENCY_SETTLE_TIMEOUT_S, what="latency jobs to start")
    finally:
        stop_background(worker)
    rows = task_rows().filter(id__in=ids).values_list("enqueued_at", "started_at")
    return latency_summary([(started - enqueued).total_seconds() for enqueued, started in rows])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--single", type=int, default=2000)
    parser.add_argument("--drain", type=int, default=10000)
    parser.add_argument("--latency-samples", type=int, default=200)
    parser.add_argument("--spacing", type=float, default=0.02)
    args = parser.parse_args()

    setup_django()
    import django_tasks_db  # noqa: F401  (import check: the peer is installed)
    from importlib.metadata import version

    env = bench_env(DJANGO_SETTINGS_MODULE="bench.settings_djtasks")
    result = {"system": "django-tasks-db", "version": version("django-tasks-db"), "vendor": "postgresql",
              "django": version("Django")}
    log(f"django-tasks: single enqueue x{args.single}")
    result["single_enqueue"] = measure_single(args.single)
    result["bulk_enqueue"] = None  # no bulk enqueue API
    log(f"django-tasks: drain {args.drain} jobs, one db_worker (one task at a time)")
    result["drain"] = measure_drain(args.drain, env)
    log(f"django-tasks: latency, {args.latency_samples} samples {args.spacing * 1000:.0f} ms apart")
    result["latency"] = measure_latency(args.latency_samples, args.spacing, env)
    clear_jobs()
    emit(result, args.out)


if __name__ == "__main__":
    main()
