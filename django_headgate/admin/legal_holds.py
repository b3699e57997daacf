"""Legal holds in the admin (DESIGN §18): the holds page and the held archive rows.

The holds page lists every hold (released ones stay: they are the log). Placing a hold (the add
form) and releasing one (the list action) need ``headgate.manage_legal_hold``; viewing needs the
view permission. Both go through ``compliance.holds`` with the user's name as ``by`` and are
written to the admin log (``LogEntry``) as well as to the hold's own row. Nothing is edited or
deleted here.

``HeldArchivedJobAdmin`` lists the rows a prune kept for a hold (``headgate_job_archive_held``),
read-only, payloads withheld, each marked held; the archive audit list marks its own held rows
through :func:`mark_held`.
"""

from django import forms
from django.contrib import admin, messages

from ..compliance.holds import check_hold_target, hold, release_hold
from ..exceptions import InvalidHold
from ..models import HeldArchivedJob, LegalHold, LegalHoldJob
from .display import format_ms
from .guards import ReadOnly, ViewPermissionFirst

MANAGE_PERMISSION = "headgate.manage_legal_hold"


def mark_held(rows, using):
    """Set ``is_held`` on archived rows (a page of them) covered by an unreleased hold: two
    queries, whatever the page."""
    active = LegalHold.objects.using(using).filter(released_at__isnull=True)
    tags = set(active.exclude(tag=None).values_list("tag", flat=True))
    job_ids = {row.job_id for row in rows}
    held_ids = set(LegalHoldJob.objects.using(using).filter(hold__released_at__isnull=True, job_id__in=job_ids)
                   .values_list("job_id", flat=True)) if job_ids else set()
    for row in rows:
        row.is_held = row.job_id in held_ids or bool(tags.intersection(row.tags or ()))


class LegalHoldForm(forms.ModelForm):
    job_ids = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4}),
                              help_text="Job ids, one per line (instead of a tag).")

    class Meta:
        model = LegalHold
        fields = ("tag", "reason")

    def clean(self):
        """Exactly one of a tag and job ids, valid (hold() checks again when it writes)."""
        cleaned = super().clean()
        text = cleaned.get("job_ids") or ""
        cleaned["job_ids"] = [line.strip() for line in text.splitlines() if line.strip()] or None
        cleaned["tag"] = cleaned.get("tag") or None
        try:
            check_hold_target(cleaned["tag"], cleaned["job_ids"])
        except InvalidHold as exc:
            raise forms.ValidationError(exc.message) from None
        return cleaned


@admin.register(LegalHold)
class LegalHoldAdmin(ViewPermissionFirst, admin.ModelAdmin):
    form = LegalHoldForm
    list_display = ("id", "target", "reason", "created_by", "created_at", "released_by", "released_at")
    list_filter = (("released_at", admin.EmptyFieldListFilter),)
    actions = ("release_selected",)

    def has_add_permission(self, request):
        return request.user.has_perm(MANAGE_PERMISSION)

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_manage_permission(self, request):
        return request.user.has_perm(MANAGE_PERMISSION)

    @admin.display(description="held")
    def target(self, placed):
        return f"tag {placed.tag}" if placed.tag else f"{placed.jobs.count()} listed jobs"

    def save_model(self, request, obj, form, change):
        obj.pk = hold(tag=form.cleaned_data["tag"], job_ids=form.cleaned_data["job_ids"],
                      reason=form.cleaned_data["reason"], by=request.user.get_username())
        obj.refresh_from_db()

    def save_related(self, request, form, formsets, change):
        """The hold's job rows are written by hold() itself."""

    @admin.action(description="Release the selected holds", permissions=["manage"])
    def release_selected(self, request, queryset):
        for placed in queryset.filter(released_at__isnull=True):
            deleted = release_hold(placed.pk, by=request.user.get_username())
            self.log_change(request, placed, f"Released the legal hold ({deleted} held archive rows deleted).")
        messages.success(request, "Released.")


@admin.register(HeldArchivedJob)
class HeldArchivedJobAdmin(ReadOnly, ViewPermissionFirst, admin.ModelAdmin):
    list_display = ("job_id", "task", "queue", "terminal_state", "held", "evicted_at", "tags")
    fields = ("job_id", "archive_id", "task", "queue", "terminal_state", "attempts", "tags",
              "created_at", "finished_at", "evicted_at", "held")
    readonly_fields = fields
    actions = None
    list_per_page = 50

    def get_queryset(self, request):
        return super().get_queryset(request).defer("args", "kwargs", "result", "errors", "fingerprint")

    @admin.display(description="held")
    def held(self, row):
        return "held (kept past its month's prune)"

    @admin.display(description="evicted at")
    def evicted_at(self, row):
        return format_ms(row.evicted_at_ms)
