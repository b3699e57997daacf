"""Replay from the archive (DESIGN §16): an archived job enqueued again as a new job (new id, same
task, arguments, queue and tags) whose ``meta`` names where it came from (``replayed_from``: the
original job id; ``replayed_from_archive_id``: the archive record). The task must still be
registered (``UnregisteredTask`` otherwise, before anything is written). Who may replay, and the
reason they give, is the admin's concern (``admin/replay.py``)."""

from ..conf import get_settings
from ..jobs.enqueue import enqueue_job
from ..jobs.new_jobs import JobSpec
from ..models import ArchivedJob
from .meta import enqueue_with_meta


def replay_archived_job(archive_id, *, using=None):
    """Enqueue a copy of the archived job ``archive_id`` now; returns the new ``Job``. Raises
    ``ArchivedJob.DoesNotExist`` when there is no such record."""
    using = using or get_settings().database
    archived = ArchivedJob.objects.using(using).get(pk=archive_id)
    spec = JobSpec(archived.task, archived.args or [], archived.kwargs or {}, archived.queue,
                   tags=list(archived.tags or ()))
    meta = {"replayed_from": str(archived.job_id), "replayed_from_archive_id": str(archived.archive_id)}
    return enqueue_with_meta(lambda: enqueue_job(spec, using=using), archived.task, archived.queue, meta, using)
