"""``manage.py headgate_status [--json]``: jobs per queue and state, oldest ready job, live
workers, archive rows per month, the archive horizon. Warnings go to the end of the text report
(and to ``warnings`` in JSON); the exit status is 0 either way."""

import json

from django.core.management.base import BaseCommand

from ...conf import get_settings
from ...status import collect_status


class Command(BaseCommand):
    help = "Show Headgate's queues, workers and archive; --json for machines."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="One JSON object instead of text.")

    def handle(self, *args, **options):
        ctx, sections = collect_status(get_settings())
        warnings = [warning for section in sections for warning in section.warnings]
        if options["json"]:
            report = {"store_now": ctx.now.isoformat()}
            report.update({section.name: section.data for section in sections})
            report["warnings"] = warnings
            self.stdout.write(json.dumps(report, indent=2, sort_keys=False, default=str))
            return
        self.stdout.write(f"Headgate status at {ctx.now.isoformat()} (store clock)")
        for section in sections:
            self.stdout.write(f"\n{section.title}")
            for line in section.lines:
                self.stdout.write(f"  {line}")
        for warning in warnings:
            self.stdout.write(self.style.WARNING(f"\nWARNING: {warning}"))
