"""``manage.py headgate_hold add|list|release``: place, list and release legal holds (DESIGN §18).

- ``add (--tag T | --job-id ID [--job-id ID ...]) --reason R [--by NAME]``: prints the hold id;
- ``list [--all]``: the unreleased holds (``--all``: released ones too), one line each;
- ``release ID [--by NAME]``: releases it and deletes the held archive rows no other hold covers.

Every hold and release is kept in ``headgate_legal_hold`` and logged. Exit status 1 with the
reason on stderr for bad input or an unknown hold id.
"""

from django.core.management.base import BaseCommand, CommandError

from ...compliance.holds import hold, list_holds, release_hold
from ...exceptions import HoldNotFound, InvalidHold, InvalidText

DEFAULT_ACTOR = "manage.py headgate_hold"


class Command(BaseCommand):
    help = "Place (add), list and release legal holds on jobs by tag or by job id."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        add = actions.add_parser("add", help="Place a hold; prints its id.")
        target = add.add_mutually_exclusive_group(required=True)
        target.add_argument("--tag", help="Hold every job carrying this tag (now and later).")
        target.add_argument("--job-id", action="append", dest="job_ids", help="Hold this job (repeatable).")
        add.add_argument("--reason", required=True, help="Why (kept with the hold).")
        add.add_argument("--by", default=DEFAULT_ACTOR, help="Who places it (kept with the hold).")
        listing = actions.add_parser("list", help="List the unreleased holds.")
        listing.add_argument("--all", action="store_true", help="Include released holds.")
        release = actions.add_parser("release", help="Release a hold.")
        release.add_argument("hold_id", help="The hold's id.")
        release.add_argument("--by", default=DEFAULT_ACTOR, help="Who releases it (kept with the hold).")

    def handle(self, *args, action, **options):
        try:
            if action == "add":
                hold_id = hold(tag=options["tag"], job_ids=options["job_ids"], reason=options["reason"],
                               by=options["by"])
                self.stdout.write(f"hold {hold_id} placed")
            elif action == "release":
                deleted = release_hold(options["hold_id"], by=options["by"])
                self.stdout.write(f"hold {options['hold_id']} released ({deleted} held archive rows deleted)")
            else:
                for placed in list_holds(include_released=options["all"]):
                    self.stdout.write(describe(placed))
        except (InvalidHold, HoldNotFound, InvalidText) as exc:
            raise CommandError(exc.message, returncode=1) from None


def describe(placed):
    """One line per hold: id, target, who and when, reason, release."""
    target = f"tag={placed.tag}" if placed.tag else f"jobs={placed.jobs.count()}"
    released = (f" released {placed.released_at:%Y-%m-%d %H:%M:%S} by {placed.released_by}"
                if placed.released_at else "")
    return (f"{placed.pk}\t{target}\tby {placed.created_by} {placed.created_at:%Y-%m-%d %H:%M:%S}"
            f"\t{placed.reason!r}{released}")
