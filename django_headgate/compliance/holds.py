"""Legal holds (DESIGN §18): ``hold(tag=... | job_ids=[...], reason=...)`` and ``release_hold(id)``.

While a hold is unreleased, the jobs it covers (every hot or archived job carrying its tag,
including jobs enqueued later, or the listed job ids) are never swept from the hot table
(``fragments.SWEEP_ELIGIBLE``), never erased unless the erasure overrides holds, and a prune of
their archive month moves them to ``headgate_job_archive_held`` instead of dropping them
(``archive/prune.py``). The ``headgate_legal_hold`` row is the hold's log (who, when, why, who
released it and when); each hold and release is also logged (``action=legal_hold_placed`` /
``legal_hold_released``). Holds are small rows written through the models.
"""

import logging
import uuid

from django.db import transaction
from django.utils import timezone

from ..conf import get_settings
from ..exceptions import HoldNotFound, InvalidHold, InvalidTags
from ..models import LegalHold, LegalHoldJob
from ..store import get_store
from ..values.job_options import check_tags
from ..values.text import check_text

logger = logging.getLogger(__name__)

#: Job ids one hold may name (a larger set is better held by a tag).
MAX_HOLD_JOB_IDS = 10_000
REASON_MAX_LENGTH = 2000
ACTOR_MAX_LENGTH = 150
#: Held-table rows deleted per transaction after a release.
RELEASE_BATCH_ROWS = 500


def hold(*, tag=None, job_ids=None, reason, by="code", using=None):
    """Place a legal hold on the jobs carrying ``tag`` or on ``job_ids``; return the hold's id.

    Exactly one of ``tag`` and ``job_ids`` (1 to 10,000 ids); ``reason`` is required text;
    ``by`` names who placed it (a user name, "manage.py", ...). Raises InvalidHold before
    anything is written."""
    reason, by = _check_reason(reason), _check_actor(by)
    tag, ids = check_hold_target(tag, job_ids)
    alias = using or get_settings().database
    with transaction.atomic(using=alias):
        placed = LegalHold.objects.using(alias).create(tag=tag, reason=reason, created_by=by)
        LegalHoldJob.objects.using(alias).bulk_create(
            [LegalHoldJob(hold=placed, job_id=job_id) for job_id in ids], batch_size=500)
    logger.info("Legal hold %s placed by %s.", placed.pk, by,
                extra={"action": "legal_hold_placed", "hold_id": placed.pk, "by": by,
                       "tag": tag, "rows": len(ids)})
    return placed.pk


def release_hold(hold_id, *, by="code", using=None):
    """Release hold ``hold_id`` (its row stays, marked released: the log). The rows of
    ``headgate_job_archive_held`` that no other unreleased hold covers are then deleted, in
    transactions of at most 500 rows; returns how many. Releasing a released hold changes
    nothing and returns 0. Raises HoldNotFound."""
    by = _check_actor(by)
    alias = using or get_settings().database
    try:
        hold_id = int(hold_id)
    except (TypeError, ValueError):
        raise HoldNotFound(f"No legal hold has the id {hold_id!r}.", hold_id=hold_id) from None
    released = (LegalHold.objects.using(alias).filter(pk=hold_id, released_at__isnull=True)
                .update(released_at=timezone.now(), released_by=by))
    if not released:
        if not LegalHold.objects.using(alias).filter(pk=hold_id).exists():
            raise HoldNotFound(f"No legal hold has the id {hold_id}.", hold_id=hold_id)
        return 0
    store, deleted = get_store(alias), 0
    while True:
        batch = store.delete_released_held_rows(RELEASE_BATCH_ROWS)
        deleted += batch
        if batch < RELEASE_BATCH_ROWS:
            break
    logger.info("Legal hold %s released by %s.", hold_id, by,
                extra={"action": "legal_hold_released", "hold_id": hold_id, "by": by, "rows": deleted})
    return deleted


def check_hold_target(tag, job_ids):
    """``(tag, sorted unique job ids)`` when exactly one of them is given and valid; else raise
    InvalidHold (``field``: "tag" or "job_ids")."""
    if (tag is None) == (job_ids is None):
        raise InvalidHold("Name either tag= or job_ids= (exactly one).", field="tag")
    if tag is None:
        return None, _check_job_ids(job_ids)
    try:
        return check_tags([tag])[0], []
    except InvalidTags as exc:
        raise InvalidHold(exc.message, field="tag") from None


def list_holds(*, include_released=False, using=None):
    """The holds, newest first (unreleased ones only unless ``include_released``)."""
    holds = LegalHold.objects.using(using or get_settings().database).all()
    return list(holds if include_released else holds.filter(released_at__isnull=True))


def _check_reason(reason):
    if not isinstance(reason, str) or not reason.strip() or len(reason) > REASON_MAX_LENGTH:
        raise InvalidHold(f"reason must be text of 1 to {REASON_MAX_LENGTH} characters.", field="reason")
    return check_text(reason, "reason")


def _check_actor(by):
    if not isinstance(by, str) or not 1 <= len(by) <= ACTOR_MAX_LENGTH:
        raise InvalidHold(f"by must be text of 1 to {ACTOR_MAX_LENGTH} characters.", field="by")
    return check_text(by, "by")


def _check_job_ids(job_ids):
    if isinstance(job_ids, (str, bytes)) or not hasattr(job_ids, "__iter__"):
        raise InvalidHold("job_ids must be a list of job ids.", field="job_ids")
    ids = []
    for job_id in job_ids:
        try:
            ids.append(job_id if isinstance(job_id, uuid.UUID) else uuid.UUID(str(job_id)))
        except ValueError:
            raise InvalidHold(f"{str(job_id)[:64]!r} is not a job id.", field="job_ids") from None
    if not 1 <= len(set(ids)) <= MAX_HOLD_JOB_IDS:
        raise InvalidHold(f"job_ids must name 1 to {MAX_HOLD_JOB_IDS} jobs.", field="job_ids")
    return sorted(set(ids))
