"""The archive audit view: ``ArchivedJob`` rows, read-only, payloads withheld (DESIGN §7, §9).

Nobody adds, changes or deletes archived jobs here (the sweep writes them, pruning a closed
month removes them). Every query of this admin leaves ``args``, ``kwargs`` and ``result`` in the
database (``defer``/``only``); a user holding ``headgate.view_archive_payload`` reveals one
record's payload through an explicit POST, and each reveal is written to the admin log
(``LogEntry``: who, when, which record, the reason given). The detail page shows each error's
attempt, time and type; messages and tracebacks (they quote task data) only in a reveal. Views
that take an id check the view permission before looking the record up (no existence oracle:
archive ids on MariaDB are time-based and guessable).

The archive may hold many millions of rows, so the list never counts them: it pages with a
probe (:mod:`.paging`), its filters read no more than an index probe per choice, facets are off
and only the eviction time sorts (the order the indexes serve).
"""

import uuid
from functools import partial

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.cache import add_never_cache_headers

from ..compliance.decryption import readable
from ..models import ArchivedJob
from . import summaries
from .display import WITHHELD, error_summaries, format_ms, json_block
from .guards import AllowListedLookups, ReadOnly, ViewPermissionFirst
from .legal_holds import mark_held
from .paging import ProbeChangeList, ProbePaginator, requested_page
from .replay import can_replay, replay_view

#: Columns the audit list reads; no payload, no errors.
LIST_COLUMNS = (
    "archive_id", "job_id", "queue", "task", "terminal_state", "attempts", "finished_at",
    "evicted_at_ms", "archive_retention_ms", "tags",
)
#: Columns never loaded except by an explicit reveal.
PAYLOAD_COLUMNS = ("args", "kwargs", "result", "fingerprint")
#: Columns a URL may filter on (``?terminal_state=dead``), besides the queue and month filters:
#: never a payload, ``errors`` (messages and tracebacks are shown only in a logged reveal) or a
#: column not listed here.
FILTERABLE_FIELDS = (
    "archive_id", "job_id", "queue", "task", "terminal_state", "attempts", "created_at", "finished_at",
    "evicted_at_ms", "archive_retention_ms",
)
PAYLOAD_PERMISSION = "headgate.view_archive_payload"
REVEAL_REASON_MAX_LENGTH = 200
#: The queue filter lists at most this many queues (each costs one index probe).
MAX_QUEUE_CHOICES = 50


class ArchiveQueueFilter(admin.SimpleListFilter):
    title = "queue"
    parameter_name = "queue"

    def lookups(self, request, model_admin):
        queues = summaries.archive_queues(MAX_QUEUE_CHOICES)
        if self.value() and self.value() not in queues:
            queues.append(self.value())
        return [(queue, queue) for queue in queues]

    def queryset(self, request, queryset):
        if self.value() is None:
            return queryset
        return queryset.filter(queue=self.value())


class EvictionMonthFilter(admin.SimpleListFilter):
    """The month of eviction (one partition: the filter is a range on ``evicted_at_ms``). Its
    choices are the prepared partitions, read from the catalogue (the horizon moves)."""

    title = "eviction month"
    parameter_name = "month"

    def lookups(self, request, model_admin):
        estimates = summaries.archive_estimates(request)
        layout = summaries.archive_layout(request)
        return [(partition.key, label) for partition, label in summaries.archive_month_choices(estimates, layout)]

    def queryset(self, request, queryset):
        if self.value() is None:
            return queryset
        partition = {p.key: p for p in summaries.archive_layout(request).partitions}.get(self.value())
        if partition is None:
            return queryset.none()
        if partition.start_ms is not None:
            queryset = queryset.filter(evicted_at_ms__gte=partition.start_ms)
        if partition.end_ms is not None:
            queryset = queryset.filter(evicted_at_ms__lt=partition.end_ms)
        return queryset


class ArchiveChangeList(ProbeChangeList):
    """The audit list reads only :data:`LIST_COLUMNS`."""

    def get_queryset(self, request, exclude_parameters=None):
        return super().get_queryset(request, exclude_parameters).only(*LIST_COLUMNS)

    def get_results(self, request):
        super().get_results(request)
        mark_held(self.result_list, self.queryset.db)  # the "held" column (DESIGN §18)


class ArchivedJobAdmin(ReadOnly, AllowListedLookups, ViewPermissionFirst, admin.ModelAdmin):
    list_display = (
        "job_id", "task", "queue", "terminal_state", "attempts", "finished_at", "evicted_at",
        "kept_until", "held",
    )
    list_filter = (ArchiveQueueFilter, EvictionMonthFilter, "terminal_state")
    filterable_fields = FILTERABLE_FIELDS
    search_fields = ("job_id",)  # replaced by get_search_results: the job id, exactly
    search_help_text = "A job id (exact match)."
    sortable_by = ("evicted_at",)
    ordering = ("-evicted_at_ms", "-archive_id")
    actions = None
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    list_per_page = 50
    change_list_template = "admin/headgate/archivedjob/change_list.html"
    change_form_template = "admin/headgate/archivedjob/change_form.html"

    # -- permissions (read-only: guards.ReadOnly) ---------------------------------------------

    @staticmethod
    def has_payload_permission(request):
        return request.user.has_perm(PAYLOAD_PERMISSION)

    # -- queries --------------------------------------------------------------------------------

    def get_queryset(self, request):
        return super().get_queryset(request).defer(*PAYLOAD_COLUMNS)

    def get_changelist(self, request, **kwargs):
        return ArchiveChangeList

    def get_paginator(self, request, queryset, per_page, orphans=0, allow_empty_first_page=True):
        return ProbePaginator(queryset, per_page, requested_page(request), range_field="evicted_at_ms",
                              orphans=orphans, allow_empty_first_page=allow_empty_first_page)

    def get_search_results(self, request, queryset, search_term):
        """Exact search on the job id (an index lookup); payloads are never searched."""
        term = search_term.strip()
        if not term:
            return queryset, False
        try:
            return queryset.filter(job_id=uuid.UUID(term)), False
        except ValueError:
            return queryset.none(), False

    # -- list and detail ------------------------------------------------------------------------

    @admin.display(description="evicted at", ordering="evicted_at_ms")
    def evicted_at(self, archived):
        return format_ms(archived.evicted_at_ms)

    @admin.display(description="legal hold", boolean=True)
    def held(self, archived):
        return getattr(archived, "is_held", False)

    @admin.display(description="kept until at least")
    def kept_until(self, archived):
        return format_ms(archived.evicted_at_ms + archived.archive_retention_ms)

    @admin.display(description="archive retention")
    def archive_retention(self, archived):
        return summaries.describe_ms(archived.archive_retention_ms)

    @admin.display(description="errors")
    def errors_display(self, archived):
        summaries_ = error_summaries(archived.errors)
        if not summaries_:
            return "-"
        return json_block({"attempts": summaries_, "message and traceback": f"{WITHHELD} (reveal)"})

    @admin.display(description="arguments, keyword arguments and result")
    def payload_withheld(self, archived):
        return f"{WITHHELD} by default."

    def get_fieldsets(self, request, obj=None):
        return [
            (None, {"fields": (("job_id", "archive_id"), ("task", "queue"),
                               ("terminal_state", "attempts", "tags"))}),
            ("Timing", {"fields": (("created_at", "finished_at"),
                                   ("evicted_at", "archive_retention", "kept_until"))}),
            ("Errors", {"fields": ("errors_display",)}),
            ("Payload", {"fields": ("payload_withheld",)}),
        ]

    def changelist_view(self, request, extra_context=None):
        rows, exact = summaries.archive_total(summaries.archive_estimates(request))
        extra_context = {"headgate_archive_rows": rows, "headgate_archive_rows_exact": exact,
                         **(extra_context or {})}
        return super().changelist_view(request, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {
            "headgate_can_reveal": self.has_payload_permission(request),
            "headgate_reveal_reason_max_length": REVEAL_REASON_MAX_LENGTH,
            "headgate_can_replay": can_replay(self, request),
            **(extra_context or {}),
        }
        return super().change_view(request, object_id, form_url, extra_context)

    # -- reveal ---------------------------------------------------------------------------------

    def reveal_view(self, request, object_id):
        """POST only: show one record's payload and write the reveal to the admin log."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        # Both permissions before the lookup: a missing id answers as a forbidden one.
        if not (self.has_payload_permission(request) and self.has_view_permission(request)):
            raise PermissionDenied
        archived = self.get_object(request, object_id)
        if archived is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        reason = request.POST.get("reason", "").strip()[:REVEAL_REASON_MAX_LENGTH]
        message = "Revealed archived payload (arguments, keyword arguments, result, errors)."
        if reason:
            message += f" Reason: {reason}"
        self.log_change(request, archived, message)
        payload = (
            ArchivedJob.objects.filter(pk=archived.pk)
            .values("args", "kwargs", "result", "fingerprint")
            .get()
        )
        context = {
            **self.admin_site.each_context(request),
            "title": f"Archived payload of job {archived.job_id}",
            "opts": self.opts,
            "original": archived,
            "reason": reason,
            "args_block": json_block(readable("args", payload["args"])),
            "kwargs_block": json_block(readable("kwargs", payload["kwargs"])),
            "result_block": json_block(readable("result", payload["result"])),
            "errors_block": json_block(readable("errors", archived.errors)) if archived.errors else "-",
            "fingerprint": payload["fingerprint"],
        }
        request.current_app = self.admin_site.name
        response = TemplateResponse(request, "admin/headgate/archivedjob/reveal.html", context)
        add_never_cache_headers(response)
        return response

    def get_urls(self):
        return [
            path("<path:object_id>/reveal/", self.admin_site.admin_view(self.reveal_view),
                 name="headgate_archivedjob_reveal"),
            path("<path:object_id>/replay/", self.admin_site.admin_view(partial(replay_view, self)),
                 name="headgate_archivedjob_replay"),
            *super().get_urls(),
        ]


admin.site.register(ArchivedJob, ArchivedJobAdmin)
