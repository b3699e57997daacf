"""``manage.py headgate_status [--json] [--check]``: jobs per queue and state, oldest ready job,
live workers, archive rows per month, the archive horizon, the last pass of every duty and the
health checks. Warnings go to the end of the text report (and to ``warnings`` in JSON).

Without ``--check`` the exit status is 0 either way. With ``--check`` (for cron or a
Nagios-style monitor) only the warnings are printed, one ``WARNING: ...`` line each (or
``OK: no warnings``), and the command exits 1 when there is any; with ``--json --check`` the
JSON report is printed and the exit status is the same.

A section the connected role lacks a privilege for is one line naming the table and pointing at
``headgate_preflight`` (and a warning); the other sections are still shown. Text read from rows
(queue names, worker ids, host names, task paths) is printed escaped (``values.text.loggable``)."""

import json

from django.core.management.base import BaseCommand, CommandError

from ...conf import get_settings
from ...values.text import loggable
from ...status import collect_status

#: The exit status of ``--check`` when anything warns (Nagios' WARNING).
CHECK_FAILED = 1


class Command(BaseCommand):
    help = "Show Headgate's queues, workers, archive and duties; --json for machines, --check for monitors."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="One JSON object instead of text.")
        parser.add_argument("--check", action="store_true",
                            help="Print only the warnings and exit 1 when there is any (for monitoring).")

    def handle(self, *args, **options):
        ctx, sections = collect_status(get_settings(), report_unreadable=True)
        warnings = [warning for section in sections for warning in section.warnings]
        if options["json"]:
            report = {"store_now": ctx.now.isoformat()}
            report.update({section.name: section.data for section in sections})
            report["warnings"] = warnings
            self.stdout.write(json.dumps(report, indent=2, sort_keys=False, default=str))
        elif options["check"]:
            for warning in warnings:
                self.stdout.write(f"WARNING: {loggable(warning, None)}")
            if not warnings:
                self.stdout.write("OK: no warnings")
        else:
            self.write_text(ctx, sections, warnings)
        if options["check"] and warnings:
            raise CommandError(f"{len(warnings)} warning(s).", returncode=CHECK_FAILED)

    def write_text(self, ctx, sections, warnings):
        self.stdout.write(f"Headgate status at {ctx.now.isoformat()} (store clock)")
        for section in sections:
            self.stdout.write(f"\n{section.title}")
            for line in section.lines:
                self.stdout.write(f"  {loggable(line, None)}")
        for warning in warnings:
            self.stdout.write(self.style.WARNING(f"\nWARNING: {loggable(warning, None)}"))
