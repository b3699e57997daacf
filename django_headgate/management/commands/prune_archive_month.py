"""``manage.py prune_archive_month YYYYMM [--dry-run]``: TRUNCATE one closed, fully expired archive month.

Exit status: 0 when the month was pruned (with ``--dry-run``: when it may be pruned now); 1 when
the prune was refused, with ``refused (<reason>): <why>`` on stderr. Reason codes:
``invalid_month``, ``outside_horizon``, ``locked``, ``month_not_closed``, ``rows_not_expired``,
``too_many_held`` (more held rows than ARCHIVE_PRUNE.HOLD_MOVE_LIMIT),
``insufficient_privilege`` (and ``in_transaction`` on MySQL). Alert on a non-zero exit.
"""

from django.core.management.base import BaseCommand, CommandError

from ...archive.prune import prune_archive_month
from ...exceptions import ArchivePruneRefused

REFUSED_EXIT_STATUS = 1


class Command(BaseCommand):
    help = ("Empty one closed, prepared archive month (YYYYMM: 202501..203112 and the months "
            "headgate_archive_horizon prepared) by TRUNCATE when every row has expired; exits 0 only "
            "when pruned (--dry-run: when it may be pruned).")

    def add_arguments(self, parser):
        parser.add_argument("month", help="The archive month, six digits YYYYMM (a prepared month: 202501 to "
                                          "203112, or a later one headgate_archive_horizon prepared).")
        parser.add_argument("--dry-run", action="store_true",
                            help="Report whether the month may be pruned now; change nothing.")

    def handle(self, *args, month, dry_run, **options):
        try:
            # The refusal is this command's output (stderr, exit 1): not logged a second time.
            result = prune_archive_month(month, dry_run=dry_run, log_refusal=False)
        except ArchivePruneRefused as refusal:
            raise CommandError(f"refused ({refusal.reason}): {refusal.message}",
                               returncode=REFUSED_EXIT_STATUS) from None
        if dry_run:
            self.stdout.write(f"{result.month}: eligible: {result.partition} may be pruned now (dry run, nothing changed).")
        else:
            self.stdout.write(f"{result.month}: pruned: {result.partition} truncated.")
