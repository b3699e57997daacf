"""The periodic schedules page of the admin (DESIGN §16): every schedule with its cron, last
tick (and the job it enqueued), next tick and whether it is paused, with Pause, Resume and Run
now buttons for a user who may operate on jobs (``headgate.change_job``). Each button is a POST,
goes through ``operations/schedules.py`` and is written to the admin log. Served under the job
admin's URLs (``admin:headgate_periodic``), like the dashboard; viewing needs ``view_job``."""

from django.contrib import messages
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from ..exceptions import HeadgateError
from ..models import Job
from ..operations.schedules import list_schedules, pause_schedule, resume_schedule, run_schedule_now

#: Button -> (operation, what the message and the log say).
OPERATIONS = {
    "pause": (pause_schedule, "paused"),
    "resume": (resume_schedule, "resumed"),
    "run-now": (run_schedule_now, "enqueued to run now"),
}


def periodic_view(model_admin, request):
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Periodic schedules",
        "opts": model_admin.opts,
        "schedules": list_schedules(),
        "can_operate": model_admin.has_operate_permission(request),
    }
    return TemplateResponse(request, "admin/headgate/job/periodic.html", context)


def periodic_operate_view(model_admin, request, name, operation):
    """POST ``periodic/<name>/<pause|resume|run-now>/``."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if operation not in OPERATIONS or not (model_admin.has_view_permission(request)
                                           and model_admin.has_operate_permission(request)):
        raise PermissionDenied
    function, done = OPERATIONS[operation]
    try:
        function(name)
    except HeadgateError as exc:
        model_admin.message_user(request, str(exc), messages.ERROR)
    else:
        LogEntry.objects.create(
            user_id=request.user.pk, content_type=ContentType.objects.get_for_model(Job), object_id="",
            object_repr=f"periodic schedule {name}"[:200], action_flag=CHANGE,
            change_message=f"Admin {operation} of the periodic schedule {name}: {done}.")
        model_admin.message_user(request, f"Periodic schedule {name}: {done}.", messages.SUCCESS)
    return HttpResponseRedirect(reverse("admin:headgate_periodic", current_app=model_admin.admin_site.name))
