"""Prometheus metrics (the optional ``[metrics]`` extra: ``pip install django-headgate[metrics]``).

:func:`serve_metrics` (``headgate_worker --metrics-port N``) registers Headgate's collector on
``prometheus_client``'s default registry and serves ``/metrics`` on that port. Exposed:

- ``headgate_jobs_total{queue, task, outcome}``: attempts this process finished, by the
  ``job_finished`` outcome (``succeeded``, ``retrying``, ``dead``, ``snoozed``);
- ``headgate_job_duration_seconds{queue, task}``: histogram of those attempts' run time;
- ``headgate_ready_jobs{queue}``: available jobs due by the store clock, per queue, read at
  scrape time by index probes, each count capped at ``READY_DEPTH_CAP`` (at most
  ``MAX_QUEUES`` queues), so a scrape stays cheap on any backlog;
- ``headgate_duty_passes_total{duty, outcome}``, ``headgate_duty_rows_total{duty, outcome}``:
  the in-process maintenance counters of :mod:`django_headgate.metrics`.

Labels are queue names, task paths, duty names and outcomes: never job ids, worker ids, host
names or payloads. Counters are per process (they start at zero); scrape every worker process
on its own port and sum in PromQL. ``headgate_ready_jobs`` is the same in every process (it is
the database's): aggregate it with ``max``, not ``sum``.
"""

import threading

from .exceptions import HeadgateError
from . import metrics as duty_metrics

#: A queue's ready depth is reported up to this many jobs ("at least" beyond).
READY_DEPTH_CAP = 10_000
#: Queues probed per scrape.
MAX_QUEUES = 50
DURATION_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800, 3600)


class MetricsUnavailable(HeadgateError):
    """Prometheus metrics need the [metrics] extra: pip install 'django-headgate[metrics]'."""


def _client():
    try:
        import prometheus_client
    except ImportError:
        raise MetricsUnavailable() from None
    return prometheus_client


_lock = threading.Lock()
_job_metrics = None


def job_metrics():
    """``(jobs_total counter, duration histogram)`` on the default registry, made once."""
    global _job_metrics
    with _lock:
        if _job_metrics is None:
            client = _client()
            _job_metrics = (
                client.Counter("headgate_jobs", "Job attempts finished by this process.",
                               ["queue", "task", "outcome"]),
                client.Histogram("headgate_job_duration_seconds", "Run time of finished job attempts.",
                                 ["queue", "task"], buckets=DURATION_BUCKETS),
            )
        return _job_metrics


def count_finished_job(sender, queue, task, outcome, seconds, **kwargs):
    """``job_finished`` receiver: one attempt into the counter and the histogram."""
    jobs_total, duration = job_metrics()
    jobs_total.labels(queue=queue, task=task, outcome=outcome).inc()
    duration.labels(queue=queue, task=task).observe(seconds)


class HeadgateCollector:
    """Scrape-time metrics: ready depth per queue (database) and the maintenance counters."""

    def __init__(self, using):
        self.using = using

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        ready = GaugeMetricFamily("headgate_ready_jobs", "Available jobs due now, per queue "
                                  f"(capped at {READY_DEPTH_CAP}).", labels=["queue"])
        for queue, depth in ready_depths(self.using).items():
            ready.add_metric([queue], depth)
        yield ready
        passes = CounterMetricFamily("headgate_duty_passes", "Maintenance passes.", labels=["duty", "outcome"])
        rows = CounterMetricFamily("headgate_duty_rows", "Rows handled by maintenance passes.",
                                   labels=["duty", "outcome"])
        for (duty, outcome), counts in sorted(duty_metrics.snapshot().items()):
            passes.add_metric([duty, outcome], counts.attempts)
            rows.add_metric([duty, outcome], counts.rows)
        yield passes
        yield rows


def ready_depths(using):
    """``{queue: ready jobs}`` by index probes, each count capped (see ``READY_DEPTH_CAP``)."""
    from django.db import connections

    from .models import Job, JobState
    from .status.reader import queues_in_state
    from .store import get_store

    try:
        now = get_store(using).now()
        jobs = Job.objects.using(using).order_by().in_state(JobState.AVAILABLE).filter(run_at__lte=now)
        return {queue: jobs.in_queue(queue)[:READY_DEPTH_CAP].count()
                for queue in queues_in_state(JobState.AVAILABLE, using=using, limit=MAX_QUEUES)}
    finally:
        connections[using].close()  # the scrape runs on the HTTP server's thread


def serve_metrics(port, using):
    """Register the collector and the job receivers; serve ``/metrics`` on ``port`` (all
    interfaces, a daemon thread). Raises MetricsUnavailable without prometheus_client."""
    from .signals import job_finished

    client = _client()
    job_metrics()
    job_finished.connect(count_finished_job, dispatch_uid="headgate.prometheus.jobs")
    client.REGISTRY.register(HeadgateCollector(using))
    client.start_http_server(port)
