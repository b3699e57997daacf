"""The erasure records in the admin (DESIGN §18): read-only, one row per ``erase()`` run (who,
when, tag, reason, rows blanked per table). Erasures are started with ``manage.py
headgate_erase`` or ``headgate.erase()``, never here; the records are never changed here."""

from django.contrib import admin

from ..models import Erasure
from .guards import ReadOnly, ViewPermissionFirst


@admin.register(Erasure)
class ErasureAdmin(ReadOnly, ViewPermissionFirst, admin.ModelAdmin):
    list_display = ("id", "tag", "requested_by", "started_at", "finished_at", "rows_blanked", "override_hold")
    fields = ("tag", "reason", "requested_by", "override_hold", "counts", "started_at", "finished_at")
    readonly_fields = fields
    search_fields = ("tag",)
    actions = None

    @admin.display(description="rows blanked")
    def rows_blanked(self, record):
        return sum(count for name, count in record.counts.items() if name.startswith("headgate_"))
