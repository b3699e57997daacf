"""An idle worker's query rate, and its enqueue->start latency, measured in-process (MariaDB/MySQL
and SQLite poll; PostgreSQL waits for NOTIFY).

    python -m bench.idle_poll --database-url URL [--idle-seconds 10] [--samples 100] [--spacing 0.02]

Every statement of this process is counted by an ``execute_wrapper`` installed on each new
connection (the worker's loop, keeper and job threads alike; the shared server's global counters
would count other clients too). Reported: statements per second of a worker idle for
``--idle-seconds`` after a few seconds without work, then the latency of ``--samples`` jobs
enqueued ``--spacing`` apart (``started_at - created_at``, both by the store clock), then the
statements per second again once idle. Use a scratch database: ``headgate_job`` is emptied.
"""

import argparse
import threading
import time

from bench.common import READY_TIMEOUT_S, emit, latency_summary, log, paced, wait_until
from bench.headgate_bench import TASK, clear_jobs, setup_django

SETTLE_SECONDS = 3.0


class StatementCounter:
    def __init__(self):
        self.count = 0
        self._lock = threading.Lock()

    def __call__(self, execute, sql, params, many, context):
        with self._lock:
            self.count += 1
        return execute(sql, params, many, context)

    def rate_over(self, seconds):
        before = self.count
        time.sleep(seconds)
        return (self.count - before) / seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--spacing", type=float, default=0.02)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    setup_django(args.database_url)
    from django.db import connection
    from django.db.backends.signals import connection_created

    import django_headgate as headgate
    from django_headgate.models import Job
    from django_headgate.worker import Worker

    counter = StatementCounter()
    connection_created.connect(lambda sender, connection, **kw: connection.execute_wrappers.append(counter),
                               weak=False)
    connection.close()
    clear_jobs()
    worker = Worker(concurrency=4)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        warmup = [headgate.enqueue(TASK).id for _ in range(5)]
        wait_until(lambda: Job.objects.filter(id__in=warmup, state="succeeded").count() == 5, READY_TIMEOUT_S,
                   what="warm-up jobs")
        time.sleep(SETTLE_SECONDS)
        idle_before = counter.rate_over(args.idle_seconds)
        log(f"{connection.vendor}: idle worker, {idle_before:.1f} statements/s over {args.idle_seconds:g} s")
        ids = [headgate.enqueue(TASK).id for _ in paced(args.samples, args.spacing)]
        wait_until(lambda: Job.objects.filter(id__in=ids, started_at__isnull=False).count() == args.samples,
                   READY_TIMEOUT_S, what="latency jobs to start")
        rows = Job.objects.filter(id__in=ids).values_list("created_at", "started_at")
        latency = latency_summary([(started - created).total_seconds() for created, started in rows])
        log(f"{connection.vendor}: latency p50 {latency['median_ms']:.1f} ms, p95 {latency['p95_ms']:.1f} ms")
        time.sleep(SETTLE_SECONDS)
        idle_after = counter.rate_over(args.idle_seconds)
        log(f"{connection.vendor}: idle again, {idle_after:.1f} statements/s")
    finally:
        worker.request_stop()
        thread.join(timeout=60)
    clear_jobs()
    result = {"vendor": connection.vendor, "idle_statements_per_s": [idle_before, idle_after],
              "latency": latency, "counted": "every statement of the process (worker threads included)"}
    if args.out:
        emit(result, args.out)


if __name__ == "__main__":
    main()
