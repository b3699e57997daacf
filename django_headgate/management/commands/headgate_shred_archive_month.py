"""``manage.py headgate_shred_archive_month YYYYMM [--by NAME] [--override-hold]``: make a closed
archive month's payloads unreadable at once by destroying its data key (DESIGN §18;
docs/compliance.md). Rows of the month not yet under its key are sealed first. Exit status 1,
with the reason on stderr, when refused (nothing changed)."""

from django.core.management.base import BaseCommand, CommandError

from ...compliance.archive_sealing import shred_archive_month
from ...exceptions import ShredRefused

DEFAULT_ACTOR = "manage.py headgate_shred_archive_month"


class Command(BaseCommand):
    help = "Destroy an archive month's data key: its payloads can no longer be read (crypto-shredding)."

    def add_arguments(self, parser):
        parser.add_argument("month", help="The closed archive month, YYYYMM.")
        parser.add_argument("--by", default=DEFAULT_ACTOR, help="Who shreds (logged, kept with the key row).")
        parser.add_argument("--override-hold", action="store_true",
                            help="Shred a month holding rows under a legal hold (refused without it).")

    def handle(self, *args, month, by, override_hold, **options):
        try:
            sealed, row = shred_archive_month(month, by=by[:150], override_hold=override_hold)
        except ShredRefused as exc:
            raise CommandError(f"refused: {exc.message}", returncode=1) from None
        self.stdout.write(f"archive month {month} shredded at {row.shredded_at:%Y-%m-%d %H:%M:%S} "
                          f"by {row.shredded_by} ({sealed} rows sealed first).")
