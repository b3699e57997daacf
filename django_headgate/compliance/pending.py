"""Erasing the jobs an erasure found waiting or running, once they have ended (DESIGN §18).

``erase()`` keeps the ids of such jobs with its record (``cursor["pending"]``) and leaves the
record unfinished. :func:`complete_pending_erasures` blanks those that have ended (and the
archived copy of one the sweep evicted first), in one transaction per record, and finishes a
record when none is left. It runs after every pass of the retention sweep (the receiver is
connected in ``apps.ready()``), so a job is erased within ``SWEEP.INTERVAL`` of its end; it can
also be called directly.
"""

import logging
import uuid

from django.utils import timezone

from ..conf import get_settings
from ..models import Erasure
from ..signals import duty_finished
from ..store import get_store
from .erasure import erased_errors

logger = logging.getLogger(__name__)

SWEEP_DUTY = "retention_sweep"


def complete_pending_erasures(using=None):
    """Blank the ended jobs every unfinished, fully walked erasure waits for; return how many
    rows were blanked."""
    alias = using or get_settings().database
    store, blanked = get_store(alias), 0
    for record in Erasure.objects.using(alias).filter(finished_at__isnull=True).order_by("pk"):
        if not record.cursor.get("walked"):
            continue  # a run killed mid-walk: running the erasure again resumes it
        pending = [uuid.UUID(job_id) for job_id in record.cursor.get("pending", [])]
        with store.atomic():
            ended, copies, waiting = store.select_ended_rows(pending)
            for key, rows, name in (("job", ended, "headgate_job"), ("archive", copies, "headgate_job_archive")):
                if rows:
                    store.blank_erasable_rows(key, [(keys, erased_errors(errors)) for keys, errors in rows])
                    record.counts[name] = record.counts.get(name, 0) + len(rows)
                    blanked += len(rows)
            record.cursor["pending"] = [str(job_id) for job_id in waiting]
            record.finished_at = None if waiting else timezone.now()
            record.save(update_fields=["counts", "cursor", "finished_at"])
        if not waiting:
            logger.info("Erasure %s finished.", record.pk,
                        extra={"action": "erasure_finished", "erasure_id": record.pk})
    return blanked


def after_sweep(sender, outcome=None, **kwargs):
    """``duty_finished`` receiver: after a retention sweep pass, complete pending erasures."""
    if getattr(sender, "name", None) == SWEEP_DUTY:
        complete_pending_erasures()


def connect_pending_erasures():
    """Connect :func:`after_sweep` to ``duty_finished`` (called from ``apps.ready()``)."""
    duty_finished.connect(after_sweep, dispatch_uid="headgate.complete_pending_erasures")
