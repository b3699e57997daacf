"""Erasure of a data subject's payloads by tag (DESIGN §18, GDPR article 17).

``erase(tag=..., reason=...)`` walks the three tables that hold payloads, in bounded batches
(``ERASURE.BATCH_SIZE`` rows, one transaction each) in primary-key order: the hot table's
terminal jobs, every archive partition (closed months included) and ``headgate_job_archive_held``.
Each row carrying the tag has ``args``, ``kwargs`` and ``result`` blanked (hot rows also
``output`` and ``progress``) and each entry of ``errors`` keeps its attempt, time and type but
loses its message and traceback; ids, task, queue, times, states and tags stay.

- Held rows: if a legal hold covers any row carrying the tag, the erasure is refused
  (ErasureRefused, ``reason="held"``) before anything is written, unless ``override_hold``.
- Record: one ``headgate_erasure`` row (who, when, tag, reason, counts per table), written
  first and updated in each batch's transaction with the counts and the cursor; ``finished_at``
  is set at the end. A killed erasure (SIGKILL included) is resumed by running it again: the
  unfinished record of the tag is continued from its cursor. Blanking is idempotent.
- Jobs that wait or run when the erasure passes are not blanked (the task still needs its
  arguments): their ids (at most 1,000) are kept with the record, which stays unfinished, and
  ``compliance/pending.py`` blanks each once it has ended (after every retention sweep pass,
  so within ``SWEEP.INTERVAL`` of its end; its archived copy if the sweep took it first).
  ``counts["unfinished_jobs"]`` says how many there were.
"""

import logging

from django.utils import timezone

from ..conf import get_settings
from ..exceptions import ErasureRefused, InvalidErasure
from ..models import Erasure
from ..store import get_store
from ..values.job_options import TAG_MAX_LENGTH
from ..values.text import check_text

logger = logging.getLogger(__name__)

#: ``(table key for the store, table name in the record)``, in the order they are walked.
TABLES = (("job", "headgate_job"), ("archive", "headgate_job_archive"), ("held", "headgate_job_archive_held"))
#: What an erased error entry keeps.
ERROR_KEYS_KEPT = ("attempt", "at", "type", "type_path", "worker_id")
ERASED = ""
REASON_MAX_LENGTH = 2000
#: Jobs still waiting or running an erasure waits for (more: run the erasure again later).
MAX_PENDING_JOBS = 1000


def erase(*, tag, reason, by="code", override_hold=False, dry_run=False, using=None):
    """Blank the payloads of every job and archived job carrying ``tag``; return the
    ``Erasure`` record (``dry_run``: an unsaved one whose counts say what would be blanked).

    Raises InvalidErasure (bad tag, reason or by) and ErasureRefused (held rows, without
    ``override_hold``) before anything is written."""
    _check(tag, reason, by)
    alias = using or get_settings().database
    store = get_store(alias)
    held = store.count_held_tagged_rows(tag)
    if held and not override_hold:
        raise ErasureRefused(f"{held} rows carrying the tag are under a legal hold; nothing was erased "
                             "(release the hold, or override it).", reason="held", held_rows=held)
    record = _open_record(alias, tag, reason, by, override_hold, dry_run)
    batch_size = get_settings().erasure_batch_size
    for key, name in TABLES:
        while _erase_batch(store, record, key, name, batch_size, dry_run) == batch_size:
            pass
    pending = store.select_unfinished_tagged_jobs(tag, MAX_PENDING_JOBS)
    record.counts["unfinished_jobs"] = len(pending)
    record.cursor.update(walked=True, pending=[str(job_id) for job_id in pending])
    if not dry_run:
        record.finished_at = None if pending else timezone.now()
        record.save(update_fields=["counts", "cursor", "finished_at"])
        logger.info("Erasure %s of a tag finished.", record.pk,
                    extra={"action": "erasure_finished", "erasure_id": record.pk, "by": by,
                           "rows": sum(record.counts.get(name, 0) for _, name in TABLES)})
    return record


def _erase_batch(store, record, key, name, limit, dry_run):
    """One batch of one table in one transaction: select, blank, record counts and cursor."""
    with store.atomic():
        rows = store.select_erasable_rows(key, record.tag, record.cursor.get(name), limit)
        if not rows:
            return 0
        record.counts[name] = record.counts.get(name, 0) + len(rows)
        record.cursor[name] = str(store.from_db_uuid(rows[-1][0][0]))
        if not dry_run:
            store.blank_erasable_rows(key, [(keys, erased_errors(errors)) for keys, errors in rows])
            record.save(update_fields=["counts", "cursor"])
    return len(rows)


def erased_errors(errors):
    """``errors`` with each entry's message and traceback blanked (other keys kept)."""
    return [{k: v for k, v in entry.items() if k in ERROR_KEYS_KEPT} | {"message": ERASED, "traceback": ERASED}
            if isinstance(entry, dict) else {"message": ERASED} for entry in errors or []]


def _open_record(alias, tag, reason, by, override_hold, dry_run):
    """The tag's unfinished record (a killed run, resumed), or a new one (unsaved if dry run)."""
    if dry_run:
        return Erasure(tag=tag, reason=reason, requested_by=by, override_hold=override_hold)
    unfinished = Erasure.objects.using(alias).filter(tag=tag, finished_at__isnull=True).order_by("pk").first()
    if unfinished is not None:
        return unfinished
    record = Erasure.objects.using(alias).create(tag=tag, reason=reason, requested_by=by,
                                                 override_hold=override_hold)
    logger.info("Erasure %s of a tag started.", record.pk,
                extra={"action": "erasure_started", "erasure_id": record.pk, "by": by})
    return record


def _check(tag, reason, by):
    if not isinstance(tag, str) or not 1 <= len(tag) <= TAG_MAX_LENGTH:
        raise InvalidErasure(f"tag must be text of 1 to {TAG_MAX_LENGTH} characters.", field="tag")
    if not isinstance(reason, str) or not reason.strip() or len(reason) > REASON_MAX_LENGTH:
        raise InvalidErasure(f"reason must be text of 1 to {REASON_MAX_LENGTH} characters.", field="reason")
    if not isinstance(by, str) or not 1 <= len(by) <= 150:
        raise InvalidErasure("by must be text of 1 to 150 characters.", field="by")
    for value, field in ((tag, "tag"), (reason, "reason"), (by, "by")):
        check_text(value, field)
