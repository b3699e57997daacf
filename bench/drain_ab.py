"""Drain A/B of two checkouts of the project: is a change slower than its base?

    .venv/bin/python -m bench.drain_ab --a ../base-checkout --b . [--jobs 50000] [--pairs 10]
        [--concurrency 4] [--vendor postgresql|mysql|sqlite] [--server-url URL]

Each checkout drains in a database of its own (``hgbench_core_<pid>_ab_a``/``_b`` on the
server, or a temporary SQLite file; created and migrated by its own code), the same backlog of
no-op jobs each time, with one ``headgate_worker --burst`` of that checkout (the core benchmark's drain after ANALYZE, ``bench/headgate_bench.py``). The
sides alternate A B B A ..., so a machine whose speed drifts over minutes (a shared host) moves
both sides of a pair alike; the figure to read is the median of the per-pair ratios B/A, not the
ratio of two medians. Each checkout needs a ``.venv`` whose interpreter imports its own code
(a symlink to this project's ``.venv`` does: the checkout's directory comes first on the path).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

from bench.run import FreshDatabase

#: The local servers (user, no password), as bench/run defaults to them.
SERVERS = {"postgresql": "postgres://postgres@127.0.0.1:5432", "mysql": "mysql://root@127.0.0.1:3306",
           "sqlite": ""}

#: Run in a checkout (its directory first on sys.path): one drain, its figures as JSON.
SAMPLE = """
import json, sys
from bench.headgate_bench import analyze_jobs, bench_env, clear_jobs, load_backlog, measure_drain, setup_django
url, jobs, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
setup_django(url)
load_backlog(jobs)
analyze_jobs()
result = measure_drain(jobs, concurrency, bench_env(HG_BENCH_DATABASE_URL=url,
                                                     DJANGO_SETTINGS_MODULE="bench.settings_headgate"))
clear_jobs()
print(json.dumps(result))
"""


def sample(checkout, url, jobs, concurrency):
    done = subprocess.run([str(checkout / ".venv" / "bin" / "python"), "-c", SAMPLE, url, str(jobs), str(concurrency)],
                          cwd=checkout, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"drain in {checkout} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    seconds = result["jobs"] / result["jobs_per_s"]
    # CPU of the whole machine per job while the jobs ran: the worker's and the database's.
    result["machine_cpu_ms_per_job"] = result["machine_busy_cores"] * seconds * 1000 / result["jobs"]
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, type=Path, help="The base checkout.")
    parser.add_argument("--b", required=True, type=Path, help="The changed checkout.")
    parser.add_argument("--jobs", type=int, default=50000)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--vendor", choices=sorted(SERVERS), default="postgresql")
    parser.add_argument("--server-url", help="The server (default: the local one of --vendor).")
    parser.add_argument("--postgres-url", help="Same as --server-url with --vendor postgresql.")
    args = parser.parse_args()

    sides = {"A": args.a.resolve(), "B": args.b.resolve()}
    server_url = args.server_url or args.postgres_url or SERVERS[args.vendor]
    figures = {"A": [], "B": []}
    with ExitStack() as databases:
        urls = {side: databases.enter_context(FreshDatabase(args.vendor, server_url, f"ab_{side.lower()}"))
                for side in sides}
        for pair in range(args.pairs):
            for side in ("AB" if pair % 2 == 0 else "BA"):
                result = sample(sides[side], urls[side], args.jobs, args.concurrency)
                result["load"] = os.getloadavg()[0]
                figures[side].append(result)
                print(f"pair {pair + 1:>2} {side}: {result['jobs_per_s']:>8,.0f} jobs/s  worker CPU "
                      f"{result['worker_cpu_ms_per_job']:.4f} ms/job  machine CPU "
                      f"{result['machine_cpu_ms_per_job']:.4f} ms/job  load {result['load']:.2f}", flush=True)
    print(f"A = {sides['A']}\nB = {sides['B']}")
    for key, label, better in (("jobs_per_s", "drain jobs/s", "higher"),
                               ("worker_cpu_ms_per_job", "worker CPU ms/job", "lower"),
                               ("machine_cpu_ms_per_job", "machine CPU ms/job", "lower")):
        a = [r[key] for r in figures["A"]]
        b = [r[key] for r in figures["B"]]
        ratios = sorted(y / x for x, y in zip(a, b))
        print(f"{label:<20} A median {statistics.median(a):>10.4f}  B median {statistics.median(b):>10.4f}  "
              f"B/A per pair: median {statistics.median(ratios):.3f} (range {ratios[0]:.3f}-{ratios[-1]:.3f}; "
              f"{better} is better)")


if __name__ == "__main__":
    main()
