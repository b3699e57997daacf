"""The batches page (DESIGN §17): a read-only list of batches with their progress (members ended
of total, by end state), a link to their members in the job list, and to their callback jobs.
Seen with the ``view_job`` permission (a batch is a view of jobs)."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from ..models import Batch
from .guards import ReadOnly


@admin.register(Batch)
class BatchAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ("id", "progress", "succeeded", "dead", "cancelled", "created_at", "finished_at", "members")
    readonly_fields = ("id", "progress", "total", "succeeded", "dead", "cancelled", "created_at", "finished_at",
                       "members", "callbacks")
    fields = readonly_fields
    ordering = ("-created_at",)
    show_full_result_count = False
    list_per_page = 50

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("headgate.view_job")

    @admin.display(description="progress")
    def progress(self, batch):
        if batch.total is None:
            return "open"
        percent = 100 if not batch.total else 100 * batch.ended // batch.total
        return f"{batch.ended:,} / {batch.total:,} ({percent}%)"

    @admin.display(description="members")
    def members(self, batch):
        url = reverse("admin:headgate_job_changelist") + f"?batch_id={batch.id}"
        return format_html('<a href="{}">members</a>', url)

    @admin.display(description="callbacks")
    def callbacks(self, batch):
        links = [(kind, job_id) for kind, job_id in (("on_success", batch.on_success_id),
                 ("on_finish", batch.on_finish_id), ("on_dead", batch.on_dead_id)) if job_id is not None]
        if not links:
            return "-"
        return format_html(", ".join(['<a href="{}">{}</a>'] * len(links)), *(
            value for kind, job_id in links
            for value in (reverse("admin:headgate_job_change", args=[job_id]), kind)))
