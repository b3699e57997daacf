"""The claim's plan on PostgreSQL with stale and with fresh statistics, on a plain session and
with the worker's session settings (no bitmap or sequential scans). Prints EXPLAIN ANALYZE of
the claim's locking SELECT for each of the four cases; docs/worker.md quotes the result.

    .venv/bin/python bench/claim_plan.py [--postgres-url URL] [--done 90000] [--ready 10000]
                                         [--held-back 100000]

The table is analysed while empty and autovacuum is off for it (statistics as stale as on a
server whose autovacuum has not caught up with a burst), then filled: ``done`` succeeded rows
and ``ready`` available ones, and ``held_back`` rows waiting behind one concurrency key (flow
control, docs/flow-control.md); then EXPLAIN, ANALYZE, EXPLAIN of the claim, and EXPLAIN of the
two reads of an admission on that key (its running count, its held-back rows in claim order).
Each case runs in a scratch database of its own, dropped afterwards.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = "hgbench_claim_plan"
CLAIM_SELECT = (
    "SELECT id FROM headgate_job WHERE state = 'available' AND run_at <= now() "
    "ORDER BY priority DESC, run_at LIMIT 16 FOR UPDATE SKIP LOCKED"
)


# The reads of a concurrency-key admission and release (store/flow_fragments.py).
KEY_READS = (
    "SELECT COUNT(*) FROM headgate_job WHERE concurrency_key = 'k' AND state = 'running'",
    "SELECT id, concurrency_limit FROM headgate_job WHERE concurrency_key = 'k' AND state = 'held_back' "
    "ORDER BY priority DESC, run_at LIMIT 64",
)


def run_case(url, worker_session, done, ready, held_back=0):
    """In a child process (one Django setup per database): migrate, fill, EXPLAIN twice."""
    import django
    import psycopg

    base = url.rsplit("/", 1)[0]
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB_NAME}")
        admin.execute(f"CREATE DATABASE {DB_NAME}")
    os.environ["HG_BENCH_DATABASE_URL"] = f"{base}/{DB_NAME}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_headgate"
    sys.path.insert(0, str(ROOT))
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", "headgate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE headgate_job SET (autovacuum_enabled = false)")
        cursor.execute("ANALYZE headgate_job")  # statistics of an empty table
        cursor.execute(
            "INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts, "
            "max_attempts, fence, fingerprint, errors, tags, retention_class, created_at) "
            "SELECT gen_random_uuid(), 'default', 'bench.tasks.noop', '[]', '{}', 0, "
            "CASE WHEN n <= %s THEN 'succeeded' ELSE 'available' END, now() - interval '1 s', 0, 3, 0, "
            "'x', '[]', '[]', 'standard_30d', now() FROM generate_series(1, %s) AS n",
            [done, done + ready])
        cursor.execute(
            "INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts, "
            "max_attempts, fence, fingerprint, errors, tags, retention_class, created_at, concurrency_key, "
            "concurrency_limit) "
            "SELECT gen_random_uuid(), 'default', 'bench.tasks.noop', '[]', '{}', 0, 'held_back', "
            "now() - interval '2 s', 0, 3, 0, 'x', '[]', '[]', 'standard_30d', now(), 'k', 1 "
            "FROM generate_series(1, %s) AS n", [held_back])
        for label in ("stale statistics (analysed while empty)", "after ANALYZE"):
            cursor.execute("BEGIN")
            if worker_session:  # what PostgreSQLStore.set_worker_plan sets
                cursor.execute("SET LOCAL enable_bitmapscan = off")
                cursor.execute("SET LOCAL enable_seqscan = off")
            plan = []
            for statement in (CLAIM_SELECT, *(KEY_READS if held_back else ())):
                cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) " + statement)
                plan += [row[0] for row in cursor.fetchall()]
            cursor.execute("ROLLBACK")
            session = "worker session" if worker_session else "plain session"
            print(f"--- {session}, {label}")
            print("\n".join(plan))
            cursor.execute("ANALYZE headgate_job")
    connection.close()
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB_NAME}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--done", type=int, default=90_000)
    parser.add_argument("--ready", type=int, default=10_000)
    parser.add_argument("--held-back", type=int, default=0,
                        help="Held-back rows behind one concurrency key (the flow-control case).")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        run_case(args.postgres_url, args.case == "worker", args.done, args.ready, args.held_back)
        return
    for case in ("plain", "worker"):
        subprocess.run([sys.executable, __file__, "--case", case, "--postgres-url", args.postgres_url,
                        "--done", str(args.done), "--ready", str(args.ready), "--held-back", str(args.held_back)],
                       check=True, cwd=ROOT)


if __name__ == "__main__":
    main()
