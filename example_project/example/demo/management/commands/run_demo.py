"""``manage.py run_demo``: migrate, enqueue a batch of demo jobs, drain it in-process, summarise.

The worker runs in burst mode (it returns when nothing is ready). The flaky jobs fail once and
are retried after a backoff delay, so one burst can end while retries wait in the future:
bursts repeat until no job of this batch is available or running, or the timeout passes.
"""

import threading
import time
import uuid
from collections import Counter

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections, transaction
from django.db.models import Count

import django_headgate as headgate
from django_headgate.models import Job, JobState
from django_headgate.worker import Worker

from ...database import ensure_database

QUEUE = "demo"
TASKS = "example.demo.tasks"
SINGLE_ENQUEUES = 10  # jobs enqueued one by one with enqueue(); the rest go through enqueue_many()
PAUSE_BETWEEN_BURSTS = 0.5
ID_CHUNK = 500  # ids per IN (...) when counting states


def positive_int(value):
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


def demo_spec(n):
    """The n-th demo job: mostly add and slow_square, every tenth one flaky."""
    if n % 10 == 9:
        return headgate.JobSpec(task=f"{TASKS}.flaky", args=(n,), queue=QUEUE, tags=("demo", "flaky"))
    if n % 2:
        return headgate.JobSpec(task=f"{TASKS}.slow_square", args=(n,), queue=QUEUE, tags=("demo",))
    return headgate.JobSpec(task=f"{TASKS}.add", args=(n, n + 1), queue=QUEUE, tags=("demo",))


class Command(BaseCommand):
    help = "Run the django-headgate demo: migrate, enqueue demo jobs, drain them with a worker, summarise."
    # The system checks run in handle(), once the database exists: some model checks connect.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--jobs", type=positive_int, default=200, help="Jobs to enqueue (default 200).")
        parser.add_argument("--concurrency", type=positive_int, default=4, help="Worker threads (default 4).")
        parser.add_argument("--timeout", type=float, default=120.0,
                            help="Give up after this many seconds of draining (default 120).")

    def handle(self, *args, jobs, concurrency, timeout, **options):
        connection = connections["default"]
        ensure_database(connection, self.stdout.write)
        self.check(databases=[connection.alias])
        self.stdout.write(f"Database: {self.describe_database(connection)}")

        started = time.monotonic()
        call_command("migrate", verbosity=0, interactive=False)
        self.stdout.write(f"Migrated in {time.monotonic() - started:.2f} s.")

        started = time.monotonic()
        job_ids = self.enqueue_demo_jobs(jobs)
        self.stdout.write(f"Enqueued {len(job_ids)} jobs on queue {QUEUE!r} in {time.monotonic() - started:.2f} s.")

        started = time.monotonic()
        totals, bursts, timed_out = self.drain(job_ids, concurrency, timeout)
        elapsed = time.monotonic() - started

        counts = self.count_states(job_ids)
        self.print_summary(job_ids, counts, totals, bursts, elapsed, connection)
        if timed_out:
            raise CommandError(f"Timed out after {timeout:.0f} s with jobs still waiting.")
        not_succeeded = len(job_ids) - counts.get(JobState.SUCCEEDED, 0)
        if not_succeeded:
            raise CommandError(f"{not_succeeded} demo job(s) did not succeed.")
        self.stdout.write(self.style.SUCCESS(f"All {len(job_ids)} demo jobs succeeded."))

    # -- enqueue -------------------------------------------------------------------------------

    def enqueue_demo_jobs(self, count):
        """Enqueue ``count`` jobs: the first few one by one (one with a unique key, enqueued twice
        to show the idempotent replay), the rest in one ``enqueue_many`` call. Returns their ids."""
        specs = [demo_spec(n) for n in range(count)]
        single, bulk = specs[:SINGLE_ENQUEUES], specs[SINGLE_ENQUEUES:]
        job_ids = []
        with transaction.atomic():  # enqueue joins the caller's transaction
            for n, spec in enumerate(single):
                unique_key = f"demo-{uuid.uuid4()}" if n == 0 else None
                job = headgate.enqueue(spec.task, args=spec.args, queue=spec.queue, tags=spec.tags,
                                       unique_key=unique_key)
                if unique_key is not None:
                    replay = headgate.enqueue(spec.task, args=spec.args, queue=spec.queue,
                                              tags=spec.tags, unique_key=unique_key)
                    if replay.id != job.id:
                        raise CommandError(f"Idempotent replay returned job {replay.id}, expected {job.id}.")
                    self.stdout.write(f"Idempotent replay: enqueue with unique_key {unique_key!r} "
                                      f"twice returned the same job {job.id}.")
                job_ids.append(job.id)
        if bulk:
            job_ids.extend(headgate.enqueue_many(bulk))
        return job_ids

    # -- drain ---------------------------------------------------------------------------------

    def drain(self, job_ids, concurrency, timeout):
        """Run burst workers until no job of ``job_ids`` is available or running.

        Returns (summed worker stats, number of bursts, whether the timeout passed)."""
        deadline = time.monotonic() + timeout
        totals = Counter()
        bursts = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return totals, bursts, True
            worker = Worker(queues=[QUEUE], concurrency=concurrency, burst=True)
            # request_stop() only sets events, so a timer thread may call it.
            stopper = threading.Timer(remaining, worker.request_stop)
            stopper.daemon = True
            stopper.start()
            try:
                stats = worker.run()
            finally:
                stopper.cancel()
            bursts += 1
            for name in ("claimed", "succeeded", "retried", "dead", "stale"):
                totals[name] += getattr(stats, name)
            counts = self.count_states(job_ids)
            waiting = counts.get(JobState.AVAILABLE, 0) + counts.get(JobState.RUNNING, 0)
            self.stdout.write(
                f"Burst {bursts}: claimed {stats.claimed}, succeeded {stats.succeeded}, "
                f"retried {stats.retried}, dead {stats.dead}, stale {stats.stale}; "
                f"{waiting} job(s) still available or running."
            )
            if not waiting:
                return totals, bursts, False
            time.sleep(PAUSE_BETWEEN_BURSTS)

    def count_states(self, job_ids):
        """{state: number of jobs} for the given ids (chunked to keep each IN list short)."""
        counts = Counter()
        for start in range(0, len(job_ids), ID_CHUNK):
            rows = (Job.objects.filter(id__in=job_ids[start:start + ID_CHUNK])
                    .order_by().values("state").annotate(n=Count("id")))
            for row in rows:
                counts[row["state"]] += row["n"]
        return counts

    # -- summary -------------------------------------------------------------------------------

    def describe_database(self, connection):
        settings = connection.settings_dict
        where = settings["NAME"]
        if settings.get("HOST"):
            where = f"{settings.get('USER') or ''}@{settings['HOST']}:{settings.get('PORT') or ''}/{where}"
        return f"{connection.display_name} (vendor {connection.vendor!r}) at {where}"

    def print_summary(self, job_ids, counts, totals, bursts, elapsed, connection):
        write = self.stdout.write
        write("")
        write("Summary")
        write(f"  database:      {self.describe_database(connection)}")
        write(f"  jobs:          {len(job_ids)}")
        for state in JobState:
            write(f"  {state.value + ':':<14} {counts.get(state.value, 0)}")
        write(f"  worker runs:   {bursts} burst(s); claimed {totals['claimed']}, succeeded "
              f"{totals['succeeded']}, retried {totals['retried']}, dead {totals['dead']}, "
              f"stale {totals['stale']}")
        rate = len(job_ids) / elapsed if elapsed > 0 else 0.0
        write(f"  drained in:    {elapsed:.2f} s ({rate:.1f} jobs/s, retry backoff included)")
        write("  sample jobs:")
        for task in ("add", "slow_square", "flaky"):
            job = (Job.objects.filter(id__in=job_ids[:ID_CHUNK], task=f"{TASKS}.{task}")
                   .order_by("created_at", "id").first())
            if job is None:
                continue
            details = f"args={job.args} -> result={job.result!r}, state={job.state}, attempts={job.attempts}"
            if job.progress is not None:
                details += f", progress={job.progress}"
            if job.output:
                details += f", output={job.output.strip()!r}"
            if job.errors:
                details += f", first error={job.errors[0].get('type')}: {job.errors[0].get('message')}"
            write(f"    {task}: {details}")
