"""The queue controls page (DESIGN §15): pause, resume and limit queues at run time.

Every write goes through ``django_headgate.flow.queue_controls`` (the form validates with it,
``save_model`` calls it), so the admin refuses what the API refuses, with the same messages.
The rate window's bookkeeping is not shown. A queue is the key: read-only once saved.
"""

from django import forms
from django.contrib import admin

from ..exceptions import InvalidQueueControl
from ..flow import queue_controls
from ..models import QueueControl


class QueueControlForm(forms.ModelForm):
    class Meta:
        model = QueueControl
        fields = ("queue", "paused", "concurrency", "rate_limit")
        help_texts = {
            "paused": "Workers stop claiming from this queue within about a second; running jobs finish.",
            "concurrency": "At most this many of the queue's jobs hold a lease at once, across all workers.",
            "rate_limit": "At most R jobs started per window, across all workers: R/s, R/m or R/h.",
        }

    def clean(self):
        data = super().clean()
        try:
            if self.instance._state.adding:
                queue_controls.check_queue_control_name(data.get("queue"))
            queue_controls.check_queue_limits(data.get("concurrency"), data.get("rate_limit") or None)
        except InvalidQueueControl as exc:
            raise forms.ValidationError({exc.field: str(exc)}) from None
        return data


@admin.register(QueueControl)
class QueueControlAdmin(admin.ModelAdmin):
    form = QueueControlForm
    list_display = ("queue", "paused", "concurrency", "rate_limit", "updated_at")
    list_filter = ("paused",)
    actions = ("pause_queues", "resume_queues")

    def get_readonly_fields(self, request, obj=None):
        return ("queue",) if obj is not None else ()

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        name = obj.queue
        (queue_controls.pause_queue if data["paused"] else queue_controls.resume_queue)(name)
        queue_controls.set_queue_limits(name, concurrency=data.get("concurrency"),
                                        rate_limit=data.get("rate_limit") or None)

    @admin.action(description="Pause the selected queues", permissions=["change"])
    def pause_queues(self, request, queryset):
        for control in queryset:
            queue_controls.pause_queue(control.queue)
        self.message_user(request, f"Paused {len(queryset)} queue(s).")

    @admin.action(description="Resume the selected queues", permissions=["change"])
    def resume_queues(self, request, queryset):
        for control in queryset:
            queue_controls.resume_queue(control.queue)
        self.message_user(request, f"Resumed {len(queryset)} queue(s).")
