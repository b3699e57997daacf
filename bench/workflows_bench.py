"""Workflows (DESIGN §17): how fast a chain and a batch run, on one fresh database.

    python -m bench.workflows_bench [--postgres-url URL] [--chain 1000] [--batch 10000]

1. chain: ``headgate.chain()`` of ``--chain`` no-op jobs (each waits for the one before), then ONE
   ``headgate_worker --burst --concurrency 4`` runs it to its end; rate = jobs / (last finish -
   first start), store clock. A chain runs one job at a time: the figure is the release-and-claim
   round trip per link.
2. batch: ``headgate.batch(on_finish=...)`` of ``--batch`` no-op members (``b.enqueue_many``), then
   the same worker drains it and runs the callback; rate over the members and the callback.

Each figure also gives the enqueue rate. The database ``hgbench_workflows_<pid>`` is created on
the server and dropped at the end.
"""

import argparse
import json
import os
import sys

from bench.common import DRAIN_TIMEOUT_S, bench_env, log, rate, run_to_end, timed

TASK = "bench.tasks.noop"


def setup(url):
    os.environ["HG_BENCH_DATABASE_URL"] = url
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_headgate"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def window():
    from django.db.models import Count, Max, Min, Q

    from django_headgate.models import Job

    return Job.objects.aggregate(first=Min("started_at"), last=Max("finished_at"),
                                 succeeded=Count("id", filter=Q(state="succeeded")))


def drain(expected, env):
    from django.db import connection

    connection.close()
    wall = run_to_end([sys.executable, "-m", "django", "headgate_worker", "--no-progress", "--burst",
                       "--concurrency", "4"], env, DRAIN_TIMEOUT_S)
    seen = window()
    assert seen["succeeded"] == expected, seen
    return {"jobs": expected, "wall_s": wall, "jobs_per_s": rate(expected, (seen["last"] - seen["first"]).total_seconds())}


def clear():
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("headgate_job", "headgate_batch", "headgate_job_dependency"):
            cursor.execute(f"DELETE FROM {table}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--chain", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=10000)
    options = parser.parse_args()
    import psycopg

    name = f"hgbench_workflows_{os.getpid()}"
    with psycopg.connect(f"{options.postgres_url}/postgres", autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        setup(f"{options.postgres_url}/{name}")
        import django_headgate as headgate
        from django_headgate import JobSpec

        env = bench_env(HG_BENCH_DATABASE_URL=f"{options.postgres_url}/{name}",
                        DJANGO_SETTINGS_MODULE="bench.settings_headgate")
        results = {}
        _, seconds = timed(headgate.chain, *(JobSpec(TASK) for _ in range(options.chain)))
        results["chain"] = {"enqueue_jobs_per_s": rate(options.chain, seconds), **drain(options.chain, env)}
        log(f"chain of {options.chain}: {results['chain']}")
        clear()

        def enqueue_batch():
            with headgate.batch(on_finish=JobSpec(TASK)) as b:
                b.enqueue_many([JobSpec(TASK) for _ in range(options.batch)])
            return b

        _, seconds = timed(enqueue_batch)
        results["batch"] = {"enqueue_jobs_per_s": rate(options.batch, seconds), **drain(options.batch + 1, env)}
        log(f"batch of {options.batch}: {results['batch']}")
        print(json.dumps(results, default=str, indent=2))
    finally:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(f"{options.postgres_url}/postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name}")


if __name__ == "__main__":
    main()
