"""The worker's own cost per job, measured in-process (less sensitive to machine load than a
subprocess's wall time): drain no-op jobs with ``Worker(burst=True)`` in this process.

    python -m bench.worker_profile --database-url URL [--jobs 5000] [--rounds 3]
        [--concurrency 4] [--buffer-per-thread N] [--no-prepared] [--profile FILE.prof] [--out FILE]

Each round loads ``--jobs`` no-op jobs (``enqueue_many``), analyses the table, then drains them
and reports: CPU ms/job (``time.process_time``: every thread of the process, the job threads,
keeper and claim loop), rate by the store clock (first start to last finish) and wall time.
``--profile`` runs the last round under cProfile and writes its stats (read them with
``python -m pstats FILE``). Use a scratch database: the bench empties ``headgate_job`` in it.
"""

import argparse
import cProfile
import os
import time

from bench.common import emit, log, median, rate
from bench.headgate_bench import TASK, analyze_jobs, clear_jobs, drain_window, load_backlog, setup_django


def drain_once(jobs, concurrency, buffer_size, profiler=None):
    from django.db import connection

    from django_headgate.worker import Worker

    load_backlog(jobs)
    analyze_jobs()
    worker = Worker(concurrency=concurrency, burst=True, buffer_size=buffer_size)
    cpu, wall = time.process_time(), time.perf_counter()
    if profiler is not None:
        profiler.enable()
    stats = worker.run()
    if profiler is not None:
        profiler.disable()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    window = drain_window()
    connection.close()
    assert window["succeeded"] == jobs == stats.succeeded, (window, stats)
    seconds = (window["last"] - window["first"]).total_seconds()
    return {"jobs": jobs, "cpu_ms_per_job": cpu * 1000 / jobs, "jobs_per_s": rate(jobs, seconds),
            "wall_seconds": wall, "loadavg": os.getloadavg()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--buffer-per-thread", type=int, default=None,
                        help="A fixed buffer of N x concurrency. Default: the worker's own, growing from "
                             "HEADGATE['WORKER']['BUFFER_PER_THREAD'] to BUFFER_MAX_PER_THREAD.")
    parser.add_argument("--no-prepared", action="store_true",
                        help="HEADGATE['PREPARED_STATEMENTS'] = False (PostgreSQL).")
    parser.add_argument("--profile", default=None, help="Write cProfile stats of the last round here.")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    setup_django(args.database_url)
    if args.no_prepared:
        from django.conf import settings
        from django.test.utils import override_settings

        override_settings(HEADGATE={**settings.HEADGATE, "PREPARED_STATEMENTS": False}).enable()
    from django_headgate import enqueue

    buffer_size = args.buffer_per_thread * args.concurrency if args.buffer_per_thread else None
    clear_jobs()
    enqueue(TASK)  # warm the enqueue path and the task registry
    clear_jobs()
    rounds = []
    for number in range(1, args.rounds + 1):
        profiler = cProfile.Profile() if args.profile and number == args.rounds else None
        found = drain_once(args.jobs, args.concurrency, buffer_size, profiler)
        log(f"round {number}: {found['cpu_ms_per_job']:.3f} CPU ms/job, {found['jobs_per_s']:,.0f} jobs/s, "
            f"load {found['loadavg'][0]:.2f}" + (" (profiled)" if profiler else ""))
        rounds.append(found)
        if profiler is not None:
            profiler.dump_stats(args.profile)
    clear_jobs()
    plain = [r for r in rounds if not (args.profile and r is rounds[-1])] or rounds
    result = {"rounds": rounds, "cpu_ms_per_job_median": median([r["cpu_ms_per_job"] for r in plain]),
              "jobs_per_s_median": median([r["jobs_per_s"] for r in plain])}
    log(f"median of {len(plain)}: {result['cpu_ms_per_job_median']:.3f} CPU ms/job, "
        f"{result['jobs_per_s_median']:,.0f} jobs/s")
    if args.out:
        emit(result, args.out)


if __name__ == "__main__":
    main()
