"""Encrypted queue against a plain one, same round: ``enqueue_many`` and drain.

    python -m bench.encryption_bench --database-url URL [--jobs 10000] [--rounds 3]
                                     [--concurrency 4] [--out FILE]

Use a scratch database (PostgreSQL, MySQL/MariaDB or SQLite; migrated, its jobs table emptied).
``HEADGATE["ENCRYPTION"]`` lists the queue ``sealed``; ``plain`` is not encrypted. Each round,
for ``plain`` then ``sealed``: ``enqueue_many`` of ``--jobs`` ``bench.tasks.echo`` jobs whose
argument is ~200 bytes of JSON (timed: the call), then one ``headgate_worker --burst
--concurrency C --queues Q`` process drains them (rate by the store clock, first start to last
finish: the task decrypts its arguments and its result is encrypted). Reported: the median of
the rounds per queue and the ratios sealed / plain (the issue's floors: drain >= 0.8,
``enqueue_many`` >= 0.7), and the CPU each side spent per job (the calling process's for
``enqueue_many``, the worker process's for the drain: less sensitive to a loaded machine). A
worker process spends over a second of CPU starting (imports, Django set-up) whatever it then
drains: that start-up, measured on an empty queue before the rounds (``worker_startup_cpu_s``),
is taken off the worker's CPU before it is divided by the jobs.
"""

import argparse
import base64
import json
import os
import time

from bench.archive_bench import create_database
from bench.common import bench_env, children_cpu_seconds, emit, log, median, rate, run_to_end, timed
from bench.headgate_bench import clear_jobs, drain_window, setup_django, worker_cmd

ENCRYPTION = {"KEYS": {"bench": base64.urlsafe_b64encode(os.urandom(32)).decode()}, "ACTIVE": "bench",
              "QUEUES": ["sealed"]}
PAYLOAD = {"customer": "c-000123", "email": "someone@example.com", "iban": "DE00123456780000000000",
           "items": [{"sku": f"SKU-{n}", "qty": n} for n in range(4)], "note": "x" * 40}


def enqueue_round(queue, jobs):
    import django_headgate as headgate
    from django_headgate import JobSpec

    clear_jobs()
    specs = [JobSpec("bench.tasks.echo", args=(PAYLOAD,), queue=queue) for _ in range(jobs)]
    cpu = time.process_time()
    _, seconds = timed(headgate.enqueue_many, specs)
    return rate(jobs, seconds), (time.process_time() - cpu) * 1e6 / jobs


def worker_cpu_seconds(queue, concurrency):
    """CPU seconds of one ``headgate_worker --burst`` process on ``queue``."""
    from django.db import connection

    connection.close()
    cpu = children_cpu_seconds()
    run_to_end(worker_cmd("--burst", "--concurrency", str(concurrency), "--queues", queue), bench_env())
    return children_cpu_seconds() - cpu


def drain_round(queue, jobs, concurrency, startup_cpu):
    cpu = worker_cpu_seconds(queue, concurrency) - startup_cpu
    window = drain_window()
    assert window["succeeded"] == jobs, window
    return rate(jobs, (window["last"] - window["first"]).total_seconds()), cpu * 1e6 / jobs


def startup_cpu_seconds(queue, concurrency):
    """A worker's start-up CPU: the lower of two bursts on an empty queue."""
    clear_jobs()
    return min(worker_cpu_seconds(queue, concurrency) for _ in range(2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--out")
    args = parser.parse_args()
    if not args.database_url.startswith("sqlite"):
        create_database(args.database_url)
    os.environ["HG_BENCH_ENCRYPTION"] = json.dumps(ENCRYPTION)
    setup_django(args.database_url)
    warm_up()
    startup = {queue: startup_cpu_seconds(queue, args.concurrency) for queue in ("plain", "sealed")}
    log("worker start-up CPU (empty queue): "
        + ", ".join(f"{queue} {seconds:.2f} s" for queue, seconds in startup.items()))
    kinds = ("enqueue_many", "enqueue_cpu_us", "drain", "worker_cpu_us")
    runs = {queue: {kind: [] for kind in kinds} for queue in ("plain", "sealed")}
    for round_ in range(args.rounds):
        for queue in ("plain", "sealed"):
            enqueued, enqueue_cpu = enqueue_round(queue, args.jobs)
            drained, worker_cpu = drain_round(queue, args.jobs, args.concurrency, startup[queue])
            for kind, value in zip(kinds, (enqueued, enqueue_cpu, drained, worker_cpu)):
                runs[queue][kind].append(value)
            log(f"round {round_ + 1} {queue}: enqueue_many {enqueued:,.0f} jobs/s ({enqueue_cpu:.0f} us CPU/job), "
                f"drain {drained:,.0f} jobs/s (worker {worker_cpu:.0f} us CPU/job)")
    summary = {queue: {kind: median(values) for kind, values in figures.items()} for queue, figures in runs.items()}
    ratios = {kind: summary["sealed"][kind] / summary["plain"][kind] for kind in kinds}
    log("median " + "; ".join(f"{kind}: plain {summary['plain'][kind]:,.0f}, sealed {summary['sealed'][kind]:,.0f}, "
                              f"sealed/plain {ratios[kind]:.2f}" for kind in kinds))
    if args.out:
        emit({"runs": runs, "median": summary, "ratio": ratios, "jobs": args.jobs,
              "concurrency": args.concurrency, "worker_startup_cpu_s": startup}, args.out)


def warm_up():
    """One small call of each kind first (imports, prepared statements)."""
    enqueue_round("plain", 50)
    enqueue_round("sealed", 50)


if __name__ == "__main__":
    main()
