"""Job actions on the ticked rows or on "all N matching" (Django's select-across), DESIGN §16.

Each action (retry, cancel, run now, reschedule) first answers with a confirmation page that
shows how many of the selected jobs it can change (reschedule asks for the new time there); the
confirmed POST then works in bounded batches: the matching ids are read ``BATCH_SIZE`` at a time
(keyset on the id) and each batch goes through the operator verbs (``operations.verbs``: locked,
state-checked, never overwriting a running job). One ``LogEntry`` per action records who, the
filter, the selection and the count.

The changelist counts the matching jobs only for a user who may operate and only when there is
more than one page, and never beyond :data:`SELECT_ALL_COUNT_CAP` rows (a bounded subquery):
that count is what lets Django offer "Select all N"."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.template.response import TemplateResponse

from ..conf import get_settings
from ..exceptions import HeadgateError
from ..models import Job
from ..operations.filters import ACTION_STATES, job_filter
from ..operations.verbs import apply_by_filter

#: The most rows the changelist counts to offer "Select all N" (the action acts on all anyway).
SELECT_ALL_COUNT_CAP = 100_000
#: action -> (label on the page, past tense for the message).
ACTION_WORDS = {
    "retry": ("Retry", "retried"),
    "cancel": ("Cancel", "cancelled"),
    "run_now": ("Run now", "made due now"),
    "reschedule": ("Reschedule", "rescheduled"),
}
CONFIRM_FIELD = "headgate_confirm"


class RescheduleForm(forms.Form):
    run_at = forms.DateTimeField(label="Run at", help_text="Date and time (the site's time zone).")


def matching_count(changelist, request):
    """The jobs the changelist's filters match, up to the cap; None when not worth counting."""
    if not changelist.multi_page or not changelist.model_admin.has_operate_permission(request):
        return None
    return changelist.queryset.order_by().values("pk")[:SELECT_ALL_COUNT_CAP].count()


class BulkJobActions:
    """Mixed into ``JobAdmin``: the four job actions, each confirmed, batched and logged once."""

    actions = ("retry_jobs", "cancel_jobs", "run_jobs_now", "reschedule_jobs")

    @admin.action(description="Retry selected dead or cancelled jobs", permissions=["operate"])
    def retry_jobs(self, request, queryset):
        return self.confirm_then_apply(request, queryset, "retry")

    @admin.action(description="Cancel selected available or running jobs", permissions=["operate"])
    def cancel_jobs(self, request, queryset):
        return self.confirm_then_apply(request, queryset, "cancel")

    @admin.action(description="Run selected waiting jobs now", permissions=["operate"])
    def run_jobs_now(self, request, queryset):
        return self.confirm_then_apply(request, queryset, "run_now")

    @admin.action(description="Reschedule selected waiting jobs", permissions=["operate"])
    def reschedule_jobs(self, request, queryset):
        return self.confirm_then_apply(request, queryset, "reschedule")

    def confirm_then_apply(self, request, queryset, action):
        form = RescheduleForm(request.POST if CONFIRM_FIELD in request.POST else None) \
            if action == "reschedule" else None
        if CONFIRM_FIELD not in request.POST or (form is not None and not form.is_valid()):
            return self.confirmation_page(request, queryset, action, form)
        run_at = form.cleaned_data["run_at"] if form is not None else None
        try:
            changed, batches, aborted = apply_to_queryset(queryset, action, run_at)
        except HeadgateError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return None
        self.log_bulk_action(request, action, changed, batches)
        if action == "cancel":
            text = f"{changed - aborted} job(s) cancelled, {aborted} running job(s) asked to abort"
        else:
            text = f"{changed} job(s) {ACTION_WORDS[action][1]}"
        self.message_user(request, f"{text} ({batches} batch(es)).", messages.SUCCESS)
        return None

    def confirmation_page(self, request, queryset, action, form):
        select_across = request.POST.get("select_across") == "1"
        context = {
            **self.admin_site.each_context(request),
            "title": f"{ACTION_WORDS[action][0]} jobs",
            "opts": self.opts,
            "action": request.POST.get("action"),
            "action_label": ACTION_WORDS[action][0],
            "states": " or ".join(ACTION_STATES[action]),
            "eligible": queryset.filter(state__in=ACTION_STATES[action]).count(),
            "select_across": select_across,
            "selected_ids": request.POST.getlist(helpers.ACTION_CHECKBOX_NAME),
            "filters": request.GET.urlencode(),
            "form": form,
            "confirm_field": CONFIRM_FIELD,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/headgate/job/action_confirmation.html", context)

    def log_bulk_action(self, request, action, changed, batches):
        """One LogEntry for the whole action: the filter, the selection and the count."""
        selection = ("all matching" if request.POST.get("select_across") == "1"
                     else f"{len(request.POST.getlist(helpers.ACTION_CHECKBOX_NAME))} ticked")
        LogEntry.objects.create(
            user_id=request.user.pk, content_type=ContentType.objects.get_for_model(Job),
            object_id="", object_repr=f"{changed} jobs ({action})", action_flag=CHANGE,
            change_message=(f"Admin {action} of {selection} jobs; filter: {request.GET.urlencode() or 'none'}; "
                            f"{changed} changed in {batches} batches."),
        )


def apply_to_queryset(queryset, action, run_at=None):
    """``action`` on every job of ``queryset`` its states allow, ``BATCH_SIZE`` ids at a time
    (each batch through ``apply_by_filter``: locked and state-checked). Returns (changed, batches,
    running jobs asked to abort)."""
    size = get_settings().operations_batch_size
    ids = queryset.filter(state__in=ACTION_STATES[action]).order_by("pk").values_list("pk", flat=True)
    changed = batches = aborted = 0
    last = None
    while True:
        page = list((ids if last is None else ids.filter(pk__gt=last))[:size])
        if not page:
            return changed, batches, aborted
        outcome = apply_by_filter(action, job_filter(ids=page), run_at=run_at, using=queryset.db)
        changed, aborted, batches, last = changed + outcome.count, aborted + outcome.abort_requested, batches + 1, page[-1]
        if len(page) < size:
            return changed, batches, aborted
