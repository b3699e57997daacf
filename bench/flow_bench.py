"""Flow control's cost on PostgreSQL (issue 21): drains of no-op jobs by one worker process,
alternating in each round, with the load average reported.

- ``unlimited``: N jobs without a key (the drain that must not slow down);
- ``200 keys``: the same N jobs spread over 200 concurrency keys with ``concurrency_limit=1``;
- ``one key``: N jobs of which 90 % share one key with limit 1 (held back behind it) and the
  rest have no key; reported with the database's CPU per completed job (the server's busy
  time from ``/proc/stat`` less the worker's own, an approximation on a shared machine).

Every case also reports the transactions committed per completed job (the scratch database's
``pg_stat_database.xact_commit``, read after the worker exited and so flushed its counters).

    .venv/bin/python bench/flow_bench.py [--postgres-url URL] [--jobs 20000] [--rounds 2]
                                          [--concurrency 16]

Each drain runs in a scratch database of its own (created, migrated, dropped).
"""

import argparse
import os
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ("unlimited", "200 keys", "one key")


def busy_jiffies():
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    return sum(fields) - fields[3] - fields[4]  # all but idle and iowait


def database_commits(connection):
    """Transactions committed in this database so far, every session's (flushed) included."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def run_case(url, case, jobs, concurrency):
    """In a child process: a scratch database, the backlog, one burst worker; prints a result line."""
    import django
    import psycopg

    base, name = url.rsplit("/", 1)[0], f"hgbench_flow_{os.getpid()}"
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
        specs = []
        for n in range(jobs):
            if case == "200 keys":
                specs.append(headgate.JobSpec("bench.tasks.noop", concurrency_key=f"k{n % 200}", concurrency_limit=1))
            elif case == "one key" and n % 10:
                specs.append(headgate.JobSpec("bench.tasks.noop", concurrency_key="one", concurrency_limit=1))
            else:
                specs.append(headgate.JobSpec("bench.tasks.noop"))
        headgate.enqueue_many(specs)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE headgate_job")
        commits_before = database_commits(connection)
        connection.close()
        busy_before, before = busy_jiffies(), resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-m", "django", "headgate_worker", "--burst", "--concurrency",
                        str(concurrency)], check=True, cwd=ROOT, env=os.environ, stdout=subprocess.DEVNULL)
        after, busy_after = resource.getrusage(resource.RUSAGE_CHILDREN), busy_jiffies()
        worker_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*), extract(epoch FROM max(finished_at) - min(started_at)) "
                           "FROM headgate_job WHERE state = 'succeeded'")
            done, seconds = cursor.fetchone()
        # Our own statements since the first reading are a handful: negligible per job.
        commits = database_commits(connection) - commits_before
        connection.close()
        assert done == jobs, (done, jobs)
        others_s = (busy_after - busy_before) / os.sysconf("SC_CLK_TCK") - worker_s
        print(f"RESULT {case}|{done / float(seconds):.0f}|{1000 * others_s / done:.3f}|{commits / done:.2f}")
    finally:
        with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        run_case(args.postgres_url, args.case, args.jobs, args.concurrency)
        return
    print(f"load average at start: {os.getloadavg()}")
    results = {case: [] for case in CASES}
    for _ in range(args.rounds):
        for case in CASES:
            out = subprocess.run([sys.executable, __file__, "--case", case, "--postgres-url", args.postgres_url,
                                  "--jobs", str(args.jobs), "--concurrency", str(args.concurrency)],
                                 check=True, cwd=ROOT, capture_output=True, text=True).stdout
            line = next(line for line in out.splitlines() if line.startswith("RESULT "))
            _, rate, cpu, commits = line[7:].split("|")
            results[case].append((int(rate), float(cpu)))
            print(f"{case:>10}: {rate} jobs/s, other CPU {cpu} ms/job, {commits} commits/job "
                  f"(load {os.getloadavg()[0]:.2f})", flush=True)
    base = sorted(rate for rate, _ in results["unlimited"])[len(results["unlimited"]) // 2]
    for case in CASES[1:]:
        rate = sorted(rate for rate, _ in results[case])[len(results[case]) // 2]
        print(f"{case} / unlimited: {rate / base:.2f}x")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
