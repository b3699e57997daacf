"""``manage.py headgate_jobs list|show|retry|cancel|run-now|reschedule|discard`` (DESIGN §16):
the operator verbs by filter on the command line, through ``django_headgate.operations``.

Filters: ``--id`` (repeatable), ``--queue``, ``--task``, ``--state`` (repeatable), ``--tag``,
``--older-than DURATION`` (``90s``, ``30m``, ``12h``, ``7d``); ``--limit`` bounds ``list``.
``--json`` prints one JSON object per job (``list``, ``show``) or per verb's outcome.
``--dry-run`` counts what a verb would change and changes nothing. A verb that changes jobs asks
for confirmation unless ``--yes``; without a terminal it needs ``--yes``. Payload fields
(``args``, ``kwargs``, ``result``) only with ``--show-payload`` on ``show``; never in ``list``.

Exit status: 0 done (jobs listed, shown or changed); 3 nothing matched (no job changed, or no
such job); 2 bad arguments or filter; 4 not confirmed (refused, or no terminal and no ``--yes``);
1 any other error (the database)."""

import json
import re
import sys
from datetime import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_duration

from ...exceptions import HeadgateError, JobNotFound
from ...operations import verbs
from ...operations.filters import STATES, job_filter
from ...operations.listing import count_matching, matching_jobs
from ...operations.records import SUMMARY_KEYS, job_record
from ...values.text import loggable

NOTHING_MATCHED, BAD_INPUT, NOT_CONFIRMED = 3, 2, 4
#: Verb name -> (action of operations.verbs, the API function).
CHANGING_VERBS = {
    "retry": ("retry", verbs.retry_jobs),
    "cancel": ("cancel", verbs.cancel_jobs),
    "run-now": ("run_now", verbs.run_jobs_now),
    "reschedule": ("reschedule", verbs.reschedule_jobs),
    "discard": ("discard", verbs.discard_jobs),
}
DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")
UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
TEXT_COLUMNS = ("id", "state", "queue", "task", "attempts", "run_at")


def duration(value):
    """``90s``, ``30m``, ``12h``, ``7d``, plain seconds, or Django's ``[DD] [HH:[MM:]]ss``."""
    match = DURATION_RE.fullmatch(value.strip())
    if match:
        return float(match.group(1)) * UNIT_SECONDS[match.group(2)]
    parsed = parse_duration(value)
    if parsed is None:
        raise CommandError(f"--older-than: {value!r} is not a duration (e.g. 90s, 30m, 12h, 7d).",
                           returncode=BAD_INPUT)
    return parsed.total_seconds()


def moment(value):
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--at: {value!r} is not an ISO 8601 date and time.", returncode=BAD_INPUT) from None


class Command(BaseCommand):
    help = "List, show, retry, cancel, run now, reschedule or discard Headgate jobs by filter."

    def add_arguments(self, parser):
        parser.add_argument("verb", choices=["list", "show", *CHANGING_VERBS])
        parser.add_argument("--id", dest="ids", action="append", help="A job id (repeatable).")
        parser.add_argument("--queue")
        parser.add_argument("--task", help="The task's dotted path.")
        parser.add_argument("--state", dest="states", action="append", choices=STATES, help="Repeatable.")
        parser.add_argument("--tag")
        parser.add_argument("--older-than", help="Created before now minus this (90s, 30m, 12h, 7d).")
        parser.add_argument("--limit", type=int, default=100, help="Jobs list shows at most (default 100).")
        parser.add_argument("--at", help="reschedule: the new start, ISO 8601 with a time zone.")
        parser.add_argument("--json", action="store_true", help="JSON: one object per job or outcome.")
        parser.add_argument("--dry-run", action="store_true", help="Count what the verb would change.")
        parser.add_argument("--yes", action="store_true", help="Do not ask for confirmation.")
        parser.add_argument("--show-payload", action="store_true", help="show: include args, kwargs, result.")

    def handle(self, *args, verb, **options):
        try:
            checked = job_filter(options["ids"], options["queue"], options["task"], options["states"],
                                 options["tag"],
                                 None if options["older_than"] is None else duration(options["older_than"]))
            if verb == "list":
                return self.list_jobs(checked, options)
            if verb == "show":
                return self.show_job(checked, options)
            return self.change_jobs(verb, checked, options)
        except JobNotFound as exc:
            raise CommandError(exc.message, returncode=NOTHING_MATCHED) from None
        except HeadgateError as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None

    def list_jobs(self, checked, options):
        if not 1 <= options["limit"] <= 10_000:
            raise CommandError("--limit must be from 1 to 10000.", returncode=BAD_INPUT)
        jobs = matching_jobs(checked, limit=options["limit"])
        if options["json"]:
            for job in jobs:
                self.stdout.write(json.dumps(job_record(job), sort_keys=False))
            return
        self.stdout.write("  ".join(TEXT_COLUMNS))
        for job in jobs:
            record = job_record(job)
            self.stdout.write("  ".join(loggable(record[column], 120) for column in TEXT_COLUMNS))
        self.stdout.write(f"{len(jobs)} job(s)" + (f" (--limit {options['limit']} reached)"
                                                   if len(jobs) == options["limit"] else ""))

    def show_job(self, checked, options):
        if len(checked.ids) != 1:
            raise CommandError("show needs exactly one --id.", returncode=BAD_INPUT)
        jobs = matching_jobs(checked, limit=1)
        if not jobs:
            raise JobNotFound(f"No hot job has id {checked.ids[0]} (with these filters).")
        record = job_record(jobs[0], details=True, payload=options["show_payload"])
        if options["json"]:
            self.stdout.write(json.dumps(record, sort_keys=False))
            return
        for key, value in record.items():
            shown = value if isinstance(value, str) else json.dumps(value)
            self.stdout.write(f"{key + ':':<20} {loggable(shown, None if key in SUMMARY_KEYS else 2000)}")

    def change_jobs(self, verb, checked, options):
        action, function = CHANGING_VERBS[verb]
        extra = {}
        if verb == "reschedule":
            if options["at"] is None:
                raise CommandError("reschedule needs --at (ISO 8601 with a time zone).", returncode=BAD_INPUT)
            extra["at"] = moment(options["at"])
        count = count_matching(action, checked)
        if options["dry_run"] or count == 0:
            self.report({"action": action, "count": count, "batches": 0, "abort_requested": 0, "dry_run": True},
                        options, f"would {verb} {count} job(s)" if options["dry_run"] else f"no job to {verb}")
            if count == 0:
                raise CommandError(f"No job matches {verb}.", returncode=NOTHING_MATCHED)
            return
        self.confirm(verb, count, options)
        outcome = function(ids=list(checked.ids) or None, queue=checked.queue, task=checked.task,
                           state=list(checked.states) or None, tag=checked.tag, older_than=checked.older_than,
                           **extra)
        self.report({"action": action, "count": outcome.count, "batches": outcome.batches,
                     "abort_requested": outcome.abort_requested, "dry_run": False}, options,
                    f"{verb}: {outcome.count} job(s) in {outcome.batches} batch(es)"
                    + (f", {outcome.abort_requested} running job(s) asked to abort" if outcome.abort_requested else ""))
        if outcome.count == 0:
            raise CommandError(f"No job changed by {verb} (they changed state meanwhile).", returncode=NOTHING_MATCHED)

    def confirm(self, verb, count, options):
        if options["yes"]:
            return
        if not sys.stdin.isatty():
            raise CommandError(f"{verb} would change {count} job(s): pass --yes (no terminal to ask on).",
                               returncode=NOT_CONFIRMED)
        answer = input(f"{verb} {count} job(s)? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            raise CommandError("Not confirmed; nothing changed.", returncode=NOT_CONFIRMED)

    def report(self, outcome, options, text):
        self.stdout.write(json.dumps(outcome) if options["json"] else text)
