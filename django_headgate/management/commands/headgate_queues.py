"""``manage.py headgate_queues [--json]``: every queue with its depth (available jobs), running
and held-back jobs, whether it is paused and its limits. ``pause NAME`` and ``resume NAME``
stop and restart claims from a queue (workers see it within about a second; running jobs
finish; enqueue goes on); ``limit NAME [--concurrency N] [--rate R/s|m|h]`` sets a queue's
limits, and a limit left out is cleared (docs/flow-control.md). Queue names are printed escaped."""

import json
from dataclasses import asdict

from django.core.management.base import BaseCommand, CommandError

from ...exceptions import InvalidQueueControl
from ...flow.overview import queue_flows
from ...flow.queue_controls import pause_queue, resume_queue, set_queue_limits
from ...values.text import loggable


class Command(BaseCommand):
    help = "List queues with depth, paused, limits and held-back jobs; pause, resume or limit a queue."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="The list as JSON.")
        verbs = parser.add_subparsers(dest="verb")
        for verb, text in (("pause", "Stop claims from a queue."), ("resume", "Claim from a queue again.")):
            verbs.add_parser(verb, help=text).add_argument("name")
        limit = verbs.add_parser("limit", help="Set a queue's limits; a limit left out is cleared.")
        limit.add_argument("name")
        limit.add_argument("--concurrency", type=int, default=None, help="Jobs leased at once, all workers.")
        limit.add_argument("--rate", default=None, help="Jobs started per window: R/s, R/m or R/h.")

    def handle(self, *args, verb=None, **options):
        try:
            if verb == "pause":
                pause_queue(options["name"])
            elif verb == "resume":
                resume_queue(options["name"])
            elif verb == "limit":
                set_queue_limits(options["name"], concurrency=options["concurrency"], rate_limit=options["rate"])
        except InvalidQueueControl as exc:
            raise CommandError(str(exc)) from None
        if verb:
            self.stdout.write(f"Queue {loggable(options['name'], None)}: {verb} done.")
            return
        flows = queue_flows()
        if options["json"]:
            self.stdout.write(json.dumps([asdict(flow) for flow in flows], indent=2))
            return
        self.stdout.write(f"{'queue':<24} {'depth':>8} {'running':>8} {'held back':>10}  {'paused':<6}  limits")
        for flow in flows:
            self.stdout.write(f"{loggable(flow.queue, None):<24} {flow.available:>8} {flow.running:>8} "
                              f"{flow.held_back:>10}  {'yes' if flow.paused else 'no':<6}  {flow.limits_text()}")
