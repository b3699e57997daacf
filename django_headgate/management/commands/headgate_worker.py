"""``manage.py headgate_worker``: run jobs until stopped (SIGTERM/SIGINT), drained or max-jobs."""

import argparse
import os
import signal
import sys
from contextlib import nullcontext

from django.core.management.base import BaseCommand, CommandError

from ...conf import get_settings
from ..console import CommandLogging
from ...exceptions import HeadgateError, InvalidText, WorkerStartFailed
from ..startup import require_configured_classes
from ...values.job_options import QUEUE_NAME_RE, check_worker_id
from ...worker import Worker

#: Exit statuses besides 0 (done) and 1 (error, e.g. the database unreachable at start-up).
EXIT_JOBS_LEFT = 3  # jobs released at the shutdown timeout, or outcomes left unwritten at the stop
EXIT_WATCHDOG = 4  # the claim loop stopped making progress; leases no longer renewed


def queue_list(value):
    queues = [q.strip() for q in value.split(",") if q.strip()]
    bad = [q for q in queues if not QUEUE_NAME_RE.fullmatch(q)]
    if not queues or bad:
        raise argparse.ArgumentTypeError(
            f"invalid queue name(s) {bad or value!r}: comma-separated names of 1 to 64 characters "
            "from [A-Za-z0-9_.-]"
        )
    return queues


def worker_id(value):
    try:
        return check_worker_id(value)
    except InvalidText as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def bounded_int(low, high):
    def parse(value):
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high} (got {number})")
        return number

    return parse


def listen_address(value):
    from ...status.prometheus import check_listen_address

    try:
        return check_listen_address(value)
    except HeadgateError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def lease_seconds(value):
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not 5 <= seconds <= 86400:
        raise argparse.ArgumentTypeError(f"must be from 5 to 86400 seconds (got {value})")
    return seconds


class Command(BaseCommand):
    help = "Run Headgate jobs: claim, execute in threads, renew leases, exit cleanly on SIGTERM/SIGINT."
    # System checks run in handle(), once the database answers: some model checks ask the server
    # its version, and an unreachable database must give one clear line, not a traceback.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--queues", type=queue_list, default=None,
                            help="Comma-separated queues to claim from (default: every queue).")
        parser.add_argument("--concurrency", type=bounded_int(1, 256), default=4,
                            help="Jobs run at once, one thread each (default 4).")
        parser.add_argument("--worker-id", type=worker_id, default=None,
                            help="Stable worker identity (default: hostname-pid).")
        parser.add_argument("--burst", action="store_true", help="Exit when no job is ready.")
        parser.add_argument("--max-jobs", type=bounded_int(1, 10**9), default=None,
                            help="Exit after claiming this many jobs (and finishing them).")
        parser.add_argument("--lease-seconds", type=lease_seconds, default=None,
                            help="Lease per claimed job (default HEADGATE['LEASE_SECONDS']).")
        parser.add_argument("--with-maintenance", action="store_true",
                            help="Also run the maintenance duties on their cadence.")
        parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                            help="One-line status every few seconds, on a terminal only (default: when stdout is one).")
        parser.add_argument("--metrics-port", type=bounded_int(1, 65535), default=None,
                            help="Serve Prometheus metrics on this port at /metrics (needs the [metrics] extra).")
        parser.add_argument("--metrics-addr", type=listen_address, default=None,
                            help="The address --metrics-port listens on (default 127.0.0.1, this host only; "
                                 "0.0.0.0 or :: for every interface).")

    def handle(self, *args, **options):
        with CommandLogging(options["verbosity"], get_settings().log_format) as console:
            self._progress, why_not = console.progress_line(self.stdout, options["progress"])
            if options["progress"] and why_not:
                self.stderr.write(f"--progress: no progress line ({why_not}).")
            self._run(options)

    def _run(self, options):
        if options["metrics_addr"] is not None and options["metrics_port"] is None:
            raise CommandError("--metrics-addr needs --metrics-port.")
        maintenance = self._maintenance(options) if options["with_maintenance"] else None
        worker = Worker(
            queues=options["queues"], concurrency=options["concurrency"],
            worker_id=options["worker_id"], burst=options["burst"], max_jobs=options["max_jobs"],
            lease_seconds=options["lease_seconds"],
            on_status=self._print_status if self._progress else None,
            maintenance=maintenance, on_watchdog=self._exit_on_watchdog,
        )
        self._install_signal_handlers(worker)
        # The database first (an unreachable one gives one clear line, after bounded retries),
        # then what needs it: the retention classes (registered once, by the worker's start-up)
        # and the heartbeat. A failure after that removes the heartbeat row again: no worker is
        # shown live that never ran.
        try:
            worker.wait_for_database()
            require_configured_classes(worker.start_up)
            if maintenance is not None:
                maintenance.announce()
            if not options.get("skip_checks"):  # call_command() skips them, as for any command
                self.check()
            if options["metrics_port"] is not None:
                self._serve_metrics(options["metrics_port"], options["metrics_addr"], worker.worker_id)
        except WorkerStartFailed as exc:
            raise CommandError(str(exc)) from None
        except BaseException:
            worker.abandon_start()
            raise
        stats = worker.run()
        if self._progress:
            self._progress.clear()
        self.stdout.write(
            f"headgate_worker {worker.worker_id}: {stats.succeeded} succeeded, {stats.retried} retried, "
            f"{stats.dead} dead, {stats.stale} rejected as stale"
            + (f", {stats.snoozed} snoozed." if stats.snoozed else ".")
        )
        if stats.cancelled or stats.timed_out:
            self.stdout.write(
                f"headgate_worker {worker.worker_id}: {stats.cancelled} cancelled on request, "
                f"{stats.timed_out} timed out, {stats.late_refused} late outcome(s) refused."
            )
        if stats.released or stats.released_at_timeout or stats.abandoned:
            self.stdout.write(
                f"headgate_worker {worker.worker_id}: {stats.released} released unstarted, "
                f"{stats.released_at_timeout} released at the shutdown timeout, "
                f"{stats.abandoned} left to the rescue duty."
            )
        if stats.given_up:  # logged at ERROR when it happened; not work this stop left behind
            self.stdout.write(
                f"headgate_worker {worker.worker_id}: {stats.given_up} outcome(s) given up while running "
                "(their jobs are released by the rescue duty)."
            )
        if stats.left_work_undone:
            sys.exit(EXIT_JOBS_LEFT)

    def _note(self, text):
        """A line of the command's own on stderr, kept off the progress line."""
        with self._progress.suspended() if self._progress else nullcontext():
            self.stderr.write(text)

    def _serve_metrics(self, port, addr, worker_id):
        from ...status.prometheus import DEFAULT_ADDR, MetricsUnavailable, serve_metrics
        from ...worker.budget import session_name

        addr = addr or DEFAULT_ADDR
        try:
            serve_metrics(port, get_settings().database, addr=addr, session_name=session_name("metrics", worker_id))
        except MetricsUnavailable as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"--metrics-port {port}: cannot listen on {addr} ({exc.strerror or exc}).") from None

    def _exit_on_watchdog(self):
        # The claim loop is stuck (a hung connection cannot be interrupted from here): leave now,
        # so the jobs' leases lapse and the rescue duty hands them to a live worker.
        self._note("Watchdog: the claim loop made no progress; exiting.")
        os._exit(EXIT_WATCHDOG)

    def _maintenance(self, options):
        from ...maintenance.runner import MaintenanceRunner

        # The Worker gives it its identity to exclude; handle() prepares it once the database answers.
        return MaintenanceRunner(get_settings())

    def _install_signal_handlers(self, worker):
        def handle(signum, frame):
            if worker.is_stopping:
                # Second signal: stop now; running jobs' leases expire and are rescued.
                self._note("Second signal: exiting without waiting for running jobs.")
                os._exit(1)
            self._note(f"{signal.Signals(signum).name}: stopping after running jobs finish.")
            worker.request_stop()

        signal.signal(signal.SIGTERM, handle)
        signal.signal(signal.SIGINT, handle)

    def _print_status(self, stats, running):
        line = (f"running {running:>3}  done {stats.succeeded:>7}  failed {stats.retried + stats.dead:>5}  "
                f"stale {stats.stale:>3}  {stats.rate():8.1f} jobs/s")
        self._progress.show(line)
