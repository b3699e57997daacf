"""``manage.py headgate_archive_horizon --through YYYYMM [--dry-run] [--detach-pruned-before YYYYMM]``.

Prepares the archive's monthly partitions through December of the target's year, moves rows
already in the old after edge into their months, and leaves one edge ``after_YYYY`` (DESIGN
§14). Idempotent: run it again with the same or a later target; a run that was interrupted is
finished by the next one. ``--detach-pruned-before`` drops the empty, ended months before a
month (never an edge, never a month with rows). Runs under the owner role (DESIGN §13).

Exit status: 0 when done (or nothing to do, or SQLite, which has no partitions); 1 when refused,
with ``refused (<reason>): <why>`` on stderr.
"""

from django.core.management.base import BaseCommand, CommandError

from ...archive.horizon import MOVE_BATCH_SIZE, extend_horizon, retire_pruned_months
from ...exceptions import ArchiveHorizonRefused, UnsupportedOnVendor

REFUSED_EXIT_STATUS = 1
MAX_BATCH_SIZE = 100_000


def batch_size(value):
    size = int(value)
    if not 1 <= size <= MAX_BATCH_SIZE:
        raise ValueError(value)
    return size


class Command(BaseCommand):
    help = ("Prepare the archive's monthly partitions through December of YYYY (--through YYYYMM), move the "
            "rows of the old after edge into their months, and optionally drop empty pruned months.")

    def add_arguments(self, parser):
        parser.add_argument("--through", metavar="YYYYMM",
                            help="Prepare every month through December of this month's year (at most 209912).")
        parser.add_argument("--detach-pruned-before", metavar="YYYYMM",
                            help="Detach and drop the months before this one that have ended and hold no rows.")
        parser.add_argument("--dry-run", action="store_true", help="Report what would change; change nothing.")
        parser.add_argument("--batch-size", type=batch_size, default=MOVE_BATCH_SIZE,
                            help=f"Rows moved per transaction out of a detached edge (1 to {MAX_BATCH_SIZE}).")

    def handle(self, *args, through, detach_pruned_before, dry_run, batch_size, **options):
        if through is None and detach_pruned_before is None:
            raise CommandError("Give --through YYYYMM and/or --detach-pruned-before YYYYMM.")
        try:
            if through is not None:
                self.report_extension(extend_horizon(through, dry_run=dry_run, batch_size=batch_size,
                                                     on_batch=self.report_batch))
            if detach_pruned_before is not None:
                self.report_retirement(retire_pruned_months(detach_pruned_before, dry_run=dry_run))
        except UnsupportedOnVendor as unsupported:
            self.stdout.write(f"Nothing to do: {unsupported.message} Every month is a range of one table there.")
        except ArchiveHorizonRefused as refusal:
            raise CommandError(f"refused ({refusal.reason}): {refusal.message}",
                               returncode=REFUSED_EXIT_STATUS) from None

    def report_batch(self, moved):
        self.stdout.write(f"moved {moved} rows")
        self.stdout.flush()

    def report_extension(self, run):
        prefix = "dry run: would " if run.dry_run else ""
        for edge in run.detached_edges:
            self.stdout.write(f"{prefix}finish moving the rows of the detached edge {edge}")
        if run.created:
            self.stdout.write(f"{prefix}create {len(run.created)} months {run.created[0]} .. {run.created[-1]}, "
                              f"replace edge {run.old_edge} by {run.new_edge}"
                              + (" (the edge holds rows: they move into their months)" if run.edge_has_rows else ""))
        if not run.dry_run and (run.created or run.detached_edges):
            moved = ("the server moved the edge's rows in the same statement" if run.moved_by_server
                     else f"moved {run.moved_rows} edge rows")
            self.stdout.write(f"{moved}; the horizon now ends with {run.through}.")
        elif not run.created and not run.detached_edges:
            self.stdout.write(f"Nothing to do: the archive is prepared through {run.through}.")

    def report_retirement(self, run):
        if run.dry_run:
            self.stdout.write("dry run: would detach and drop " + (", ".join(run.retired) or "no month"))
        else:
            self.stdout.write("detached and dropped " + (", ".join(run.retired) or "no month"))
        if run.kept_with_rows:
            self.stdout.write("kept (they hold rows): " + ", ".join(run.kept_with_rows))
