"""Replay an archived job from its audit page (DESIGN §16): a POST with a reason enqueues a copy
as a new job (``operations/replay.py``) and is written to the admin log like a reveal (who, when,
which record, the new job, the reason). It needs ``headgate.view_archivedjob``,
``headgate.view_job_payload`` (the copy carries the payload) and ``headgate.replay_archived_job``,
checked before the record is looked up (no existence oracle)."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import reverse

from ..exceptions import HeadgateError
from ..operations.replay import replay_archived_job

REPLAY_PERMISSIONS = ("headgate.view_job_payload", "headgate.replay_archived_job")
REPLAY_REASON_MAX_LENGTH = 200


def can_replay(model_admin, request):
    return model_admin.has_view_permission(request) and request.user.has_perms(REPLAY_PERMISSIONS)


def replay_view(model_admin, request, object_id):
    """POST only: enqueue a copy of the archived job; a reason is required."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not can_replay(model_admin, request):
        raise PermissionDenied
    archived = model_admin.get_object(request, object_id)
    if archived is None:
        return model_admin._get_obj_does_not_exist_redirect(request, model_admin.opts, object_id)
    back = reverse("admin:headgate_archivedjob_change", args=[archived.pk], current_app=model_admin.admin_site.name)
    reason = request.POST.get("reason", "").strip()[:REPLAY_REASON_MAX_LENGTH]
    if not reason:
        model_admin.message_user(request, "A replay needs a reason (it is recorded in the admin log).",
                                 messages.ERROR)
        return HttpResponseRedirect(back)
    try:
        job = replay_archived_job(archived.pk)
    except HeadgateError as exc:
        model_admin.message_user(request, f"Not replayed: {exc}", messages.ERROR)
        return HttpResponseRedirect(back)
    model_admin.log_change(request, archived, f"Replayed archived job {archived.job_id} as the new job {job.id}. "
                                              f"Reason: {reason}")
    model_admin.message_user(request, f"Replayed as the new job {job.id}.", messages.SUCCESS)
    return HttpResponseRedirect(reverse("admin:headgate_job_change", args=[job.pk],
                                        current_app=model_admin.admin_site.name))
