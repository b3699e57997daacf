"""The cost of ``headgate.wait()``'s NOTIFY trigger on PostgreSQL (issue 22): drains of no-op
jobs by one worker process with the trigger ``headgate_job_ended`` present (as migrated) and
dropped, alternating in each round (the order flips every round), with the load average.

No job of the drain is awaited, which is the common case the trigger must not slow down: its WHEN
clause (``NEW.awaited AND ...``) is false, so the function never runs and no NOTIFY is sent; what
is measured is the trigger's presence on every state change of the worker's acknowledgements.

    .venv/bin/python bench/notify_trigger_bench.py [--postgres-url URL] [--jobs 50000] [--rounds 3]
                                                   [--concurrency 4]

Each drain runs in a scratch database of its own (created, migrated, dropped).
"""

import argparse
import importlib
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ("trigger", "dropped")


def run_case(url, case, jobs, concurrency):
    """In a child process: a scratch database, the backlog, one burst worker; prints a result line."""
    import django
    import psycopg

    base, name = url.rsplit("/", 1)[0], f"hgbench_notify_{os.getpid()}"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        os.environ["HG_BENCH_DATABASE_URL"] = f"{base}/{name}"
        os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_headgate"
        sys.path.insert(0, str(ROOT))
        django.setup()
        from django.core.management import call_command
        from django.db import connection

        import django_headgate as headgate

        call_command("migrate", "headgate", verbosity=0)
        # The migration's own statement, so the bench drops exactly what 0010 created.
        operator_controls = importlib.import_module("django_headgate.migrations.0010_operator_controls")
        with connection.cursor() as cursor:
            if case == "dropped":
                cursor.execute(operator_controls.DROP_TRIGGER)
            cursor.execute("SELECT count(*) FROM pg_trigger WHERE tgname = 'headgate_job_ended'")
            assert cursor.fetchone()[0] == (1 if case == "trigger" else 0)
        headgate.enqueue_many([headgate.JobSpec("bench.tasks.noop")] * jobs)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE headgate_job")
        connection.close()
        subprocess.run([sys.executable, "-m", "django", "headgate_worker", "--burst", "--concurrency",
                        str(concurrency)], check=True, cwd=ROOT, env=os.environ, stdout=subprocess.DEVNULL)
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*), extract(epoch FROM max(finished_at) - min(started_at)) "
                           "FROM headgate_job WHERE state = 'succeeded'")
            done, seconds = cursor.fetchone()
        connection.close()
        assert done == jobs, (done, jobs)
        print(f"RESULT {case}|{done / float(seconds):.0f}")
    finally:
        with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--jobs", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        run_case(args.postgres_url, args.case, args.jobs, args.concurrency)
        return
    print(f"load average at start: {os.getloadavg()}", flush=True)
    rates, ratios = {case: [] for case in CASES}, []
    for number in range(args.rounds):
        order = CASES if number % 2 == 0 else CASES[::-1]
        this_round = {}
        for case in order:
            out = subprocess.run([sys.executable, __file__, "--case", case, "--postgres-url", args.postgres_url,
                                  "--jobs", str(args.jobs), "--concurrency", str(args.concurrency)],
                                 check=True, cwd=ROOT, capture_output=True, text=True).stdout
            line = next(line for line in out.splitlines() if line.startswith("RESULT "))
            this_round[case] = int(line[7:].split("|")[1])
            rates[case].append(this_round[case])
            print(f"round {number + 1} {case:>8}: {this_round[case]} jobs/s (load {os.getloadavg()[0]:.2f})", flush=True)
        ratios.append(this_round["trigger"] / this_round["dropped"])
    for case in CASES:
        print(f"{case}: median {statistics.median(rates[case]):.0f} jobs/s "
              f"({min(rates[case])}-{max(rates[case])})")
    print(f"trigger / dropped, per round: {', '.join(f'{r:.3f}' for r in ratios)}; "
          f"median {statistics.median(ratios):.3f}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
