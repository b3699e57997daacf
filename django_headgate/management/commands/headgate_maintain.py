"""``manage.py headgate_maintain [--once]``: run the maintenance duties (rescue, retention sweep,
heartbeat prune, archive prune), each as a cluster-wide singleton, on their cadence or exactly
once. The command reads the settings and passes them to the runner."""

import signal

from django.core.management.base import BaseCommand, CommandError

from ...conf import get_settings
from ..console import CommandLogging
from ...maintenance.duty import outcome_note
from ...maintenance.registry import duty_names
from ...maintenance.runner import MaintenanceRunner
from ..startup import require_configured_classes


class Command(BaseCommand):
    help = "Run Headgate maintenance duties on their cadence; --once runs each exactly one pass now."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="One pass of each duty, then exit.")
        parser.add_argument("--duty", action="append", dest="duties", default=None,
                            help=f"Only this duty (repeatable): {', '.join(duty_names())}.")

    def handle(self, *args, **options):
        conf = get_settings()
        with CommandLogging(options["verbosity"], conf.log_format):
            self._run(conf, options)

    def _run(self, conf, options):
        try:
            runner = MaintenanceRunner(conf, duty_names=options["duties"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        require_configured_classes(runner.prepare)  # a changed configured class stops the start
        runner.announce(once=options["once"])
        if options["once"]:
            outcomes = runner.run_once()
            for outcome in outcomes:
                note = outcome_note(outcome.status, outcome.contended)
                reduced = f" reduced_batch_size={outcome.reduced_batch_size}" if outcome.reduced_batch_size else ""
                self.stdout.write(f"{outcome.duty}: {outcome.status}{f' ({note})' if note else ''} "
                                  f"rows={outcome.rows} batches={outcome.batches} seconds={outcome.seconds:.3f}"
                                  f"{reduced}")
            if any(outcome.failed for outcome in outcomes):
                raise CommandError("A duty failed; see the log.")
            return
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: runner.stop())
        runner.run_forever()
