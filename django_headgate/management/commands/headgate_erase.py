"""``manage.py headgate_erase --tag T --reason R [--by NAME] [--dry-run] [--override-hold]``:
blank the payloads of every job and archived job carrying tag T (DESIGN §18; docs/compliance.md).

Prints the rows blanked per table and the jobs still waiting or running (run it again once they
ended). A killed run is resumed by running the same command again. Exit status 1, with the
reason on stderr, for bad input or held rows without ``--override-hold`` (nothing written).
"""

from django.core.management.base import BaseCommand, CommandError

from ...compliance.erasure import TABLES, erase
from ...exceptions import ErasureRefused, InvalidErasure, InvalidText

DEFAULT_ACTOR = "manage.py headgate_erase"


class Command(BaseCommand):
    help = "Erase a data subject's payloads (args, kwargs, result, output, progress, error texts) by tag."

    def add_arguments(self, parser):
        parser.add_argument("--tag", required=True, help="The data subject's tag.")
        parser.add_argument("--reason", required=True, help="Why (kept in the erasure record).")
        parser.add_argument("--by", default=DEFAULT_ACTOR, help="Who asks (kept in the erasure record).")
        parser.add_argument("--dry-run", action="store_true", help="Count the rows; change nothing.")
        parser.add_argument("--override-hold", action="store_true",
                            help="Erase rows under a legal hold too (refused without it).")

    def handle(self, *args, tag, reason, by, dry_run, override_hold, **options):
        try:
            record = erase(tag=tag, reason=reason, by=by, dry_run=dry_run, override_hold=override_hold)
        except (InvalidErasure, ErasureRefused, InvalidText) as exc:
            raise CommandError(f"refused: {exc.message}", returncode=1) from None
        counts = ", ".join(f"{name} {record.counts.get(name, 0)}" for _, name in TABLES)
        head = "dry run, would blank" if dry_run else f"erasure {record.pk}: blanked"
        self.stdout.write(f"{head}: {counts}; jobs not ended yet: {record.counts.get('unfinished_jobs', 0)}")
