"""Policy pages: retention classes, queue storage policies, archive policies (DESIGN §6, §7, §9).

Every write goes through ``django_headgate.policies`` (the forms in :mod:`.forms` call it, the
delete paths call its ``clear_*`` functions), so the admin refuses exactly what the Python API
refuses, with the same messages, and keeps its caches right. Retention classes are immutable:
they can be added, never changed or deleted here. A queue is the key of its policies: it is
read-only once saved.
"""

from django.contrib import admin

from .. import policies
from ..models import ArchivePolicy, QueueStoragePolicy, RetentionClass
from .forms import ArchivePolicyForm, QueueStoragePolicyForm, RetentionClassForm, format_duration


def _duration_or_forever(value):
    return "forever" if value is None else format_duration(value)


class PolicyAdmin(admin.ModelAdmin):
    """Saving is done by the form through the API; nothing is saved twice here."""

    def save_model(self, request, obj, form, change):
        """The form's API call already wrote ``obj`` (see ``PolicyForm``)."""

    #: Fields shown read-only on a saved policy's page (the add page edits every field it shows).
    readonly_on_change = ()

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_on_change if obj is not None else ()


@admin.register(RetentionClass)
class RetentionClassAdmin(PolicyAdmin):
    form = RetentionClassForm
    list_display = ("key", "duration_display", "created_at")
    search_fields = ("key",)
    readonly_on_change = ("key", "duration_display", "created_at")

    def get_fields(self, request, obj=None):
        return ("key", "duration") if obj is None else self.readonly_on_change

    @admin.display(description="duration", ordering="duration")
    def duration_display(self, retention_class):
        return _duration_or_forever(retention_class.duration)

    def has_change_permission(self, request, obj=None):
        # Immutable once registered: the list is browsable, a saved class is view-only.
        if obj is not None:
            return False
        return super().has_change_permission(request)

    def has_delete_permission(self, request, obj=None):
        return False  # jobs keep their class key for their whole life


@admin.register(QueueStoragePolicy)
class QueueStoragePolicyAdmin(PolicyAdmin):
    form = QueueStoragePolicyForm
    list_display = ("queue", "retention_display", "retention_class", "cleanup_batch_limit", "paused",
                    "updated_at")
    search_fields = ("queue",)
    readonly_on_change = ("queue", "retention_class", "updated_at")

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("queue", "retention", "cleanup_batch_limit", "paused")
        return ("queue", "retention", "retention_class", "cleanup_batch_limit", "paused", "updated_at")

    @admin.display(description="retention", ordering="retention")
    def retention_display(self, policy):
        return _duration_or_forever(policy.retention)

    def delete_model(self, request, obj):
        policies.clear_queue_retention(obj.queue)

    def delete_queryset(self, request, queryset):
        for queue in queryset.values_list("queue", flat=True):
            policies.clear_queue_retention(queue)


@admin.register(ArchivePolicy)
class ArchivePolicyAdmin(PolicyAdmin):
    form = ArchivePolicyForm
    list_display = ("queue", "archive_retention_display", "updated_at")
    search_fields = ("queue",)
    readonly_on_change = ("queue", "updated_at")

    def get_fields(self, request, obj=None):
        return ("queue", "archive_retention") if obj is None else ("queue", "archive_retention", "updated_at")

    @admin.display(description="archive retention", ordering="archive_retention")
    def archive_retention_display(self, policy):
        return format_duration(policy.archive_retention)

    def delete_model(self, request, obj):
        policies.clear_archive_policy(obj.queue)

    def delete_queryset(self, request, queryset):
        for queue in queryset.values_list("queue", flat=True):
            policies.clear_archive_policy(queue)
