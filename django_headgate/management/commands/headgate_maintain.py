"""``manage.py headgate_maintain [--once]``: run the maintenance duties (rescue, retention sweep,
heartbeat prune, archive prune), each as a cluster-wide singleton, on their cadence or exactly
once. The command reads the settings and passes them to the runner."""

import logging
import signal

from django.core.management.base import BaseCommand, CommandError

from ...conf import get_settings
from ...maintenance.registry import duty_names
from ...maintenance.runner import MaintenanceRunner
from ..startup import require_configured_classes

VERBOSITY_LOG_LEVELS = {0: logging.ERROR, 1: logging.WARNING, 2: logging.INFO, 3: logging.DEBUG}


class Command(BaseCommand):
    help = "Run Headgate maintenance duties on their cadence; --once runs each exactly one pass now."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="One pass of each duty, then exit.")
        parser.add_argument("--duty", action="append", dest="duties", default=None,
                            help=f"Only this duty (repeatable): {', '.join(duty_names())}.")

    def handle(self, *args, **options):
        logging.getLogger("django_headgate").setLevel(VERBOSITY_LOG_LEVELS.get(options["verbosity"], logging.INFO))
        try:
            runner = MaintenanceRunner(get_settings(), duty_names=options["duties"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        require_configured_classes(runner.prepare)  # a changed configured class stops the start
        if options["once"]:
            outcomes = runner.run_once()
            for outcome in outcomes:
                self.stdout.write(f"{outcome.duty}: {outcome.status} rows={outcome.rows} "
                                  f"batches={outcome.batches} seconds={outcome.seconds:.3f}")
            if any(outcome.failed for outcome in outcomes):
                raise CommandError("A duty failed; see the log.")
            return
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: runner.stop())
        runner.run_forever()
