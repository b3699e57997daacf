"""Job inspection in the admin: the hot table ``headgate_job`` (DESIGN §9).

Read-only as a model admin: nothing here saves a Job. The detail page's retry and cancel buttons
go through ``django_headgate.api`` (the store's guarded statements); the list's actions (retry,
cancel, run now, reschedule, on ticked rows or all matching) are ``bulk_actions.py``'s; all need
``headgate.change_job``. Arguments, keyword arguments, result and
fingerprint are shown only to users holding ``headgate.view_job_payload``; for everybody else the
query does not even load them (``defer``), so no page, error page or template can leak them.

Task-written text follows the same rule (docs/security.md): ``output`` and the message and
traceback of each ``errors`` entry need ``view_job_payload`` (they often quote arguments); every
``view_job`` holder sees ``progress`` and each error's attempt, time, type and worker. Views that
take an object id check the view permission before looking the object up, so a missing id and
a forbidden one answer alike (no existence oracle). URL filters are accepted on
:data:`FILTERABLE_FIELDS` only (never on a payload, ``output`` or ``errors``, whoever asks), and
every button is written to the admin log (one ``LogEntry`` per job; one per list action).

Past 300 lines: the one ModelAdmin of the hot table, whose fieldsets and read-only displays carry
every feature's columns (flow control, meta, workflows, the decrypted reveal); its actions,
filters, paging and display helpers are modules of their own.
"""

import json
import uuid
from functools import partial

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html

from .. import api
from ..compliance.decryption import readable_job
from ..exceptions import HeadgateError
from ..flow.waiting import waiting_reason
from ..models import Job, JobState
from .bulk_actions import BulkJobActions, matching_count
from .dashboard import dashboard_view
from .periodic import periodic_operate_view, periodic_view
from .display import WITHHELD, compact_datetime, error_blocks, error_summaries, json_block, text_block
from .guards import AllowListedLookups, ReadOnly, ViewPermissionFirst
from .paging import ProbeChangeList, ProbePaginator, requested_page
from . import summaries
from .filters import QueueFilter, RetentionClassFilter, TaskFilter
from .summaries import job_state_counts

#: Columns the job changelist reads; payloads, errors and output stay in the database.
LIST_COLUMNS = (
    "id", "task", "queue", "state", "priority", "attempts", "max_attempts", "retention_class",
    "created_at", "run_at", "finished_at",
)
#: Columns a user without ``view_job_payload`` never loads.
PAYLOAD_COLUMNS = ("args", "kwargs", "result", "fingerprint")
#: Task-written text a user without ``view_job_payload`` never loads either.
TASK_TEXT_COLUMNS = ("output",)
#: Columns a URL may filter on (``?state=dead``): what every ``view_job`` holder sees. Payloads,
#: ``output``, ``errors`` (their messages and tracebacks are withheld) and any column not listed
#: here are refused.
FILTERABLE_FIELDS = (
    "id", "queue", "task", "state", "priority", "retention_class", "unique_key", "attempts",
    "max_attempts", "run_at", "created_at", "started_at", "finished_at", "expires_at",
    "batch_id",  # a batch's members (admin/batches.py links them)
)
PAYLOAD_PERMISSION = "headgate.view_job_payload"
OPERATE_PERMISSION = "headgate.change_job"


class JobChangeList(ProbeChangeList):
    """The job list reads only :data:`LIST_COLUMNS`, one page at a time; it counts (bounded) only
    for a user who may operate on a list of several pages, to offer "Select all N" (bulk_actions.py)."""

    def get_queryset(self, request, exclude_parameters=None):
        return super().get_queryset(request, exclude_parameters).only(*LIST_COLUMNS)

    def get_results(self, request):
        super().get_results(request)
        total = matching_count(self, request)
        if total is not None:
            self.result_count = total


class JobAdmin(BulkJobActions, ReadOnly, AllowListedLookups, ViewPermissionFirst, admin.ModelAdmin):
    # What an operator scans for, in 1280 px with the filter sidebar: state, attempts and times
    # before the long task path (which wraps); the id shows its last, random group (the full id
    # is the link's title and the detail page's heading); priority and retention class are
    # filters and detail fields.
    list_display = (
        "short_id", "state", "task", "queue", "attempts_display", "run_at_display",
        "finished_at_display",
    )
    list_display_links = ("short_id",)
    list_filter = (QueueFilter, "state", TaskFilter, RetentionClassFilter)
    filterable_fields = FILTERABLE_FIELDS
    search_fields = ("id",)  # replaced by get_search_results: id, unique key or tag, exactly
    search_help_text = "A job id, a unique key or a tag (exact match)."
    # Newest first through the primary key (ids are time-ordered UUIDv7): an index read, where
    # ordering by created_at would sort the whole hot table on every page view.
    ordering = ("-id",)
    sortable_by = ("short_id",)
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    list_per_page = 50
    change_list_template = "admin/headgate/job/change_list.html"
    change_form_template = "admin/headgate/job/change_form.html"

    # -- permissions: view-only model admin; actions need change_job ----------------------------

    def has_operate_permission(self, request):
        return request.user.has_perm(OPERATE_PERMISSION)

    @staticmethod
    def has_payload_permission(request):
        return request.user.has_perm(PAYLOAD_PERMISSION)

    # -- queries ---------------------------------------------------------------------------------

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if not self.has_payload_permission(request):
            queryset = queryset.defer(*PAYLOAD_COLUMNS, *TASK_TEXT_COLUMNS)
        return queryset

    def get_object(self, request, object_id, from_field=None):
        """The job, its encrypted payloads decrypted for display (never written back: view-only)."""
        return readable_job(super().get_object(request, object_id, from_field))

    def get_changelist(self, request, **kwargs):
        return JobChangeList

    def get_paginator(self, request, queryset, per_page, orphans=0, allow_empty_first_page=True):
        return ProbePaginator(queryset, per_page, requested_page(request), orphans=orphans,
                              allow_empty_first_page=allow_empty_first_page)

    def get_search_results(self, request, queryset, search_term):
        """Exact search on the job id, the unique key or one tag; payloads are never searched."""
        term = search_term.strip()
        if not term:
            return queryset, False
        try:
            return queryset.filter(id=uuid.UUID(term)), False
        except ValueError:
            pass
        tagged = queryset.filter(tags__icontains=_json_string(term))
        return (queryset.filter(unique_key=term) | tagged), False

    # -- list and detail -------------------------------------------------------------------------

    @admin.display(description="id", ordering="id")
    def short_id(self, job):
        return format_html('<span title="{}">…{}</span>', job.id, str(job.id).rsplit("-", 1)[-1])

    @admin.display(description="attempts")
    def attempts_display(self, job):
        return f"{job.attempts} / {job.max_attempts}"

    @admin.display(description="run at")
    def run_at_display(self, job):
        return compact_datetime(job.run_at)

    @admin.display(description="finished at")
    def finished_at_display(self, job):
        return compact_datetime(job.finished_at)

    def get_fieldsets(self, request, obj=None):
        fieldsets = [
            (None, {"fields": (("id", "state"), ("task", "queue", "priority"),
                               ("tags", "unique_key", "retention_class"), "meta_display")}),
            ("Timing", {"fields": (("created_at", "run_at"), ("started_at", "finished_at", "expires_at"))}),
            ("Attempts and lease", {"fields": (("attempts", "max_attempts", "fence"),
                                               ("lease_owner", "lease_expires_at"),
                                               ("timeout", "abort_requested_at"))}),
            ("Flow control", {"fields": (("concurrency_key", "concurrency_limit"), "waiting_display")}),
        ]
        if self.has_payload_permission(request):
            fieldsets += [
                ("Progress and output", {"fields": ("progress_display", "output_display")}),
                ("Errors", {"fields": ("errors_display",)}),
                ("Payload", {"fields": ("args_display", "kwargs_display", "result_display", "fingerprint")}),
            ]
        else:
            fieldsets += [
                ("Progress and output", {"fields": ("progress_display", "output_withheld")}),
                ("Errors", {"fields": ("error_summaries_display",)}),
                ("Payload", {"fields": ("payload_withheld",)}),
            ]
        return fieldsets

    @admin.display(description="meta")
    def meta_display(self, job):
        return "-" if job.meta is None else json_block(job.meta)  # the caller's context, not payload

    @admin.display(description="why it waits")
    def waiting_display(self, job):
        return waiting_reason(job) or "-"

    @admin.display(description="progress")
    def progress_display(self, job):
        return "-" if job.progress is None else json_block(job.progress)

    @admin.display(description="output")
    def output_display(self, job):
        return text_block(job.output)

    @admin.display(description="errors")
    def errors_display(self, job):
        return error_blocks(job.errors)

    @admin.display(description="errors")
    def error_summaries_display(self, job):
        summaries_ = error_summaries(job.errors)
        if not summaries_:
            return "-"
        return json_block({"attempts": summaries_, "message and traceback": WITHHELD})

    @admin.display(description="output")
    def output_withheld(self, job):
        return f"{WITHHELD}: viewing it needs the permission “Can view job arguments and results”."

    @admin.display(description="arguments")
    def args_display(self, job):
        return json_block(job.args)

    @admin.display(description="keyword arguments")
    def kwargs_display(self, job):
        return json_block(job.kwargs)

    @admin.display(description="result")
    def result_display(self, job):
        return "-" if job.result is None else json_block(job.result)

    @admin.display(description="arguments and result")
    def payload_withheld(self, job):
        return f"{WITHHELD}: viewing them needs the permission “Can view job arguments and results”."

    def changelist_view(self, request, extra_context=None):
        extra_context = {
            "headgate_states": list(JobState.labels),
            "headgate_queue_counts": job_state_counts(request),
            "headgate_count_cap": f"{summaries.COUNT_CAP:,}",
            **(extra_context or {}),
        }
        return super().changelist_view(request, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {"headgate_can_operate": self.has_operate_permission(request),
                         **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra_context)

    # -- retry and cancel buttons of the detail page: through the API (list actions: bulk_actions.py)

    def _apply(self, request, job_ids, operation, done):
        """Call ``operation(job_id)`` for each job; write each success to the admin log
        (``LogEntry``: who, when, which job, what happened); report successes (grouped by what
        ``done`` says of the returned Job, or by ``done`` itself when it is text) and each refusal."""
        succeeded = {}
        for job_id in job_ids:
            try:
                job = operation(job_id)
            except HeadgateError as exc:
                self.message_user(request, str(exc), messages.ERROR)
            else:
                label = done if isinstance(done, str) else done(job)
                self.log_change(request, job, f"Admin {operation.__name__}: {label}.")
                succeeded[label] = succeeded.get(label, 0) + 1
        for label, count in succeeded.items():
            noun = "job" if count == 1 else "jobs"
            self.message_user(request, f"{count} {noun} {label}.", messages.SUCCESS)

    def operate_view(self, request, object_id, operation):
        """POST ``<id>/retry/`` or ``<id>/cancel/`` from the detail page's buttons."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not (self.has_operate_permission(request) and self.has_view_permission(request)):
            raise PermissionDenied  # before the lookup: a missing id answers as a forbidden one
        job = self.get_object(request, object_id)
        if job is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if operation == "retry":
            self._apply(request, [job.pk], api.retry, "retried")
        else:
            self._apply(request, [job.pk], api.cancel, _cancel_done)
        return HttpResponseRedirect(reverse("admin:headgate_job_change", args=[job.pk],
                                            current_app=self.admin_site.name))

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("dashboard/", wrap(self.dashboard), name="headgate_dashboard"),
            path("periodic/", wrap(partial(periodic_view, self)), name="headgate_periodic"),
            path("periodic/<str:name>/<str:operation>/", wrap(partial(periodic_operate_view, self)),
                 name="headgate_periodic_operate"),
            path("<path:object_id>/retry/", wrap(self.operate_view),
                 {"operation": "retry"}, name="headgate_job_retry"),
            path("<path:object_id>/cancel/", wrap(self.operate_view),
                 {"operation": "cancel"}, name="headgate_job_cancel"),
            *super().get_urls(),
        ]

    def dashboard(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        return dashboard_view(self, request)


def _json_string(term):
    """The term as it appears inside a JSON list of strings (quotes included)."""
    return json.dumps(term, ensure_ascii=False)


admin.site.register(Job, JobAdmin)


def _cancel_done(job):
    """What cancel() did: a waiting job is cancelled; a running one is asked to stop."""
    if job.state == "running":
        return "running: abort requested (ends cancelled when its task returns)"
    return "cancelled"
