"""The Headgate dashboard: one admin page an operator can keep open (DESIGN §9).

Jobs per queue and state, jobs finished per minute over the last hour and, from the samples of
the ``dashboard_sample`` duty, the last 24 hours by outcome and the ready depth per queue (SVG
charts drawn on the server from :mod:`.charts`: no script, no CDN), live workers, the last
outcome of every maintenance duty, archive rows per month, the archive horizon and the periodic
schedules. Workers, archive and horizon are those of ``manage.py headgate_status`` (:func:`django_headgate.status.collect_status`, the same code).
It is served under the job admin's URLs (``admin:headgate_dashboard``), so it works on whatever
admin site the job admin is registered with; it needs the permission to view jobs.
"""

from dataclasses import replace
from datetime import timedelta

from django.template.response import TemplateResponse

from ..conf import get_settings
from ..maintenance.dashboard_sample import DashboardSampleDuty
from ..models import JobState
from ..status import (
    archive_section, collect_status, flow_section, health_section, horizon_section, periodic_section, workers_section,
)
from . import summaries
from .charts import depth_chart, finished_chart, outcome_chart

#: What the dashboard shares with ``headgate_status``. Its job counts are its own (capped index
#: reads, like the job list's) rather than the status command's GROUP BY over the hot table.
STATUS_SECTIONS = [workers_section, flow_section, archive_section, horizon_section, health_section, periodic_section]


def sample_charts(store_now, conf, duty_outcomes):
    """The two 24-hour charts and what the page says about the samples behind them: when the
    newest was taken, and whether sampling looks stopped (the ``dashboard_sample`` duty's last
    pass, from ``duty_outcomes``, is more than two intervals old or never happened). The duty's
    pass, not the newest row, decides: an idle installation writes no rows and is not stopped."""
    hours = summaries.outcomes_per_hour(store_now)
    last_pass = next((outcome.finished_at for outcome in duty_outcomes if outcome.duty == DashboardSampleDuty.name), None)
    overdue = last_pass is None or store_now - last_pass > timedelta(seconds=2 * conf.dashboard_interval)
    return {
        "outcome_chart": outcome_chart(hours),
        "depth_chart": depth_chart(summaries.ready_depth_per_hour(store_now), [hour.hour for hour in hours]),
        "newest_sample_at": summaries.newest_sample_at(), "last_sample_pass_at": last_pass,
        "samples_overdue": overdue, "sampling_enabled": conf.dashboard_enabled,
    }


def archive_rows(archive):
    """``headgate_status``'s archive data as ``[(key, label, rows or None, exact)]``, newest
    first, for the partitions that may hold rows."""
    exact = set(archive.get("exact_partitions", ()))
    return [(key, key if not key.isdigit() else f"{key[:4]}-{key[4:]}", rows, key in exact)
            for key, rows in reversed(archive["rows_by_partition"].items()) if rows != 0]


def queue_rows(request, store_now):
    """Jobs per queue and state (capped counts) with the age of each queue's oldest ready job."""
    oldest = summaries.oldest_ready_seconds(store_now)
    return [replace(row, oldest_ready_seconds=oldest.get(row.queue))
            for row in summaries.job_state_counts(request)]


def dashboard_view(model_admin, request):
    """Render the dashboard (the caller has checked the permission to view jobs)."""
    conf = get_settings()
    status, sections = collect_status(conf, sections=STATUS_SECTIONS)
    duty_outcomes = summaries.last_duty_outcomes()
    by_name = {section.name: section for section in sections}
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Headgate dashboard",
        "opts": model_admin.opts,
        "store_now": status.now,
        "states": list(JobState.labels),
        "queue_counts": queue_rows(request, status.now),
        "count_cap": f"{summaries.COUNT_CAP:,}",
        "chart": finished_chart(summaries.finished_per_minute(status.now)),
        **sample_charts(status.now, conf, duty_outcomes),
        "workers": by_name["workers"].data,
        "flow": by_name["flow"],
        "duty_outcomes": duty_outcomes,
        "archive": by_name["archive"].data,
        "periodic": by_name["periodic"].data,
        "archive_rows": archive_rows(by_name["archive"].data),
        "horizon": by_name["horizon"].data,
        "warnings": [warning for section in sections for warning in section.warnings],
    }
    request.current_app = model_admin.admin_site.name
    return TemplateResponse(request, "admin/headgate/dashboard.html", context)
