"""What the ``compliance`` section of ``headgate_status`` reports (DESIGN §18): unreleased legal
holds, rows kept in ``headgate_job_archive_held`` and erasures not finished yet.

Reads the small hold and erasure tables; the held table is counted up to :data:`COUNT_BOUND`.
"""

from ..models import Erasure, HeldArchivedJob, LegalHold

#: Held rows are counted exactly up to this many ("more than" beyond).
COUNT_BOUND = 100_000


def compliance_report(ctx):
    """``(data, lines, warnings)``: active holds, held archive rows, unfinished erasures."""
    alias = ctx.store.alias
    holds = LegalHold.objects.using(alias).filter(released_at__isnull=True).count()
    held_rows = HeldArchivedJob.objects.using(alias).all()[:COUNT_BOUND + 1].count()
    unfinished = list(Erasure.objects.using(alias).filter(finished_at__isnull=True)
                      .values_list("pk", "counts"))
    waiting = [pk for pk, counts in unfinished if counts.get("unfinished_jobs")]
    data = {"active_holds": holds, "held_archive_rows": min(held_rows, COUNT_BOUND),
            "held_archive_rows_exact": held_rows <= COUNT_BOUND,
            "unfinished_erasures": [pk for pk, _ in unfinished]}
    lines = [f"{holds} legal hold(s) in force; "
             f"{'more than ' if held_rows > COUNT_BOUND else ''}{min(held_rows, COUNT_BOUND)} held archive row(s)",
             f"{len(unfinished)} erasure(s) not finished" + (f" ({len(waiting)} waiting for jobs to end)" if waiting else "")]
    warnings = [f"Erasure {pk} did not finish its walk (killed?): run headgate_erase again for its tag."
                for pk, counts in unfinished if pk not in waiting]
    return data, lines, warnings
