"""Prometheus metrics (the optional ``[metrics]`` extra: ``pip install django-headgate[metrics]``).

:func:`serve_metrics` (``headgate_worker --metrics-port N [--metrics-addr A]``) registers
Headgate's collector on ``prometheus_client``'s default registry and serves ``/metrics`` on that
port, on the loopback interface unless told otherwise (``DEFAULT_ADDR``). Exposed:

- ``headgate_jobs_total{queue, task, outcome}``: attempts this process finished, by the
  ``job_finished`` outcome (``succeeded``, ``retrying``, ``dead``, ``snoozed``);
- ``headgate_job_duration_seconds{queue, task}``: histogram of those attempts' run time;
- ``headgate_ready_jobs{queue}``: available jobs due by the store clock, per queue, read by
  index probes, each count capped at ``READY_DEPTH_CAP`` (at most ``MAX_QUEUES`` queues);
- ``headgate_jobs_held_back{queue, reason}``: jobs waiting on flow control (DESIGN §15):
  ``concurrency_key`` (held back for a slot of their key), ``queue_paused`` (available in a
  paused queue); at most ``MAX_QUEUES`` queues, read with the ready gauge;
- ``headgate_duty_passes_total{duty, outcome}``, ``headgate_duty_rows_total{duty, outcome}``:
  the in-process maintenance counters of :mod:`django_headgate.metrics`.

Labels are queue names, task paths, duty names and outcomes: never job ids, worker ids, host
names or payloads. The label sets are bounded whatever the rows say (:class:`JobLabels`): a
task path has a label only when it is registered in this process, and only the first
``MAX_QUEUE_LABELS`` queues this process sees get one; everything else counts under ``other``.

The database is read at most once per ``GAUGE_MAX_AGE_SECONDS`` (:class:`DatabaseGauges`):
scrapes in between, concurrent ones included, share that reading; a read runs on one
connection at a time, each statement under ``GAUGE_STATEMENT_SECONDS``.

Counters are per process (they start at zero); scrape every worker process on its own port and
sum in PromQL. ``headgate_ready_jobs`` is the same in every process (it is the database's):
aggregate it with ``max``, not ``sum``.
"""

import ipaddress
import logging
import threading
import time

from django.db import DatabaseError, connections

from .. import metrics as duty_metrics
from ..exceptions import HeadgateError
from ..store.errors import describe_database_error

logger = logging.getLogger(__name__)

#: The address ``--metrics-port`` listens on unless ``--metrics-addr`` says otherwise.
DEFAULT_ADDR = "127.0.0.1"
#: A queue's ready depth is reported up to this many jobs ("at least" beyond).
READY_DEPTH_CAP = 10_000
#: Queues probed for the ready gauge per reading (the first ones by name).
MAX_QUEUES = 50
#: Queues with a label of their own in the job counters; later ones count under ``other``.
MAX_QUEUE_LABELS = 50
#: The label of unregistered task paths and of the queues past ``MAX_QUEUE_LABELS``.
OTHER = "other"
#: A reading of the database gauges serves every scrape for this long (Prometheus's default
#: scrape interval).
GAUGE_MAX_AGE_SECONDS = 15.0
#: Budget of each statement of a gauge reading, and of the whole reading.
GAUGE_STATEMENT_SECONDS = 2.0
GAUGE_READ_SECONDS = 5.0
DURATION_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800, 3600)


class MetricsUnavailable(HeadgateError):
    """Prometheus metrics need the [metrics] extra: pip install 'django-headgate[metrics]'."""


def _client():
    try:
        import prometheus_client
    except ImportError:
        raise MetricsUnavailable() from None
    return prometheus_client


def check_listen_address(value):
    """``value`` if it is an IPv4 or IPv6 address (``127.0.0.1``, ``0.0.0.0``, ``::``), else
    HeadgateError."""
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise HeadgateError(f"{value!r} is not an IP address (e.g. 127.0.0.1, 0.0.0.0 or ::).") from None


class JobLabels:
    """The bounded label values of the job metrics: a task path only when it is registered in
    this process (a row can name anything), the first ``max_queues`` queues seen."""

    def __init__(self, max_queues=MAX_QUEUE_LABELS):
        self.max_queues = max_queues
        self._queues = set()
        self._lock = threading.Lock()

    def task(self, path):
        from ..registry.tasks import is_registered

        return path if is_registered(path) else OTHER

    def queue(self, name):
        with self._lock:
            if name in self._queues:
                return name
            if len(self._queues) < self.max_queues:
                self._queues.add(name)
                return name
        return OTHER


class JobMetrics:
    """The job counter and duration histogram on ``registry``, with bounded labels."""

    def __init__(self, registry, labels=None):
        client = _client()
        self.labels = labels or JobLabels()
        self.jobs_total = client.Counter("headgate_jobs", "Job attempts finished by this process.",
                                         ["queue", "task", "outcome"], registry=registry)
        self.duration = client.Histogram("headgate_job_duration_seconds", "Run time of finished job attempts.",
                                         ["queue", "task"], buckets=DURATION_BUCKETS, registry=registry)

    def count(self, queue, task, outcome, seconds):
        queue, task = self.labels.queue(queue), self.labels.task(task)
        self.jobs_total.labels(queue=queue, task=task, outcome=outcome).inc()
        self.duration.labels(queue=queue, task=task).observe(seconds)


_lock = threading.Lock()
_job_metrics = None
_collector = None


def job_metrics():
    """The :class:`JobMetrics` of the default registry, made once."""
    global _job_metrics
    with _lock:
        if _job_metrics is None:
            _job_metrics = JobMetrics(_client().REGISTRY)
        return _job_metrics


def count_finished_job(sender, queue, task, outcome, seconds, **kwargs):
    """``job_finished`` receiver: one attempt into the counter and the histogram."""
    job_metrics().count(queue, task, outcome, seconds)


class DatabaseGauges:
    """The gauges read from the database (ready depth per queue), shared by every scrape.

    :meth:`read` returns the last reading while it is younger than ``max_age`` seconds; else
    the first caller reads the database again while concurrent callers wait for that reading
    (a lock, so one connection at a time). The reading runs under the store's statement budget
    and closes its connection after (scrapes run on the HTTP server's short-lived threads). A
    failed reading logs one line and yields None (the gauge is left out of that scrape)."""

    def __init__(self, using, *, max_age=GAUGE_MAX_AGE_SECONDS, statement_seconds=GAUGE_STATEMENT_SECONDS,
                 read_seconds=GAUGE_READ_SECONDS, session_name=None, clock=time.monotonic):
        self.using = using
        self.max_age = max_age
        self.statement_seconds = statement_seconds
        self.read_seconds = read_seconds
        self.session_name = session_name
        self._clock = clock
        self._lock = threading.Lock()
        self._read_at = None
        self._depths = None
        self._held_back = None

    def read(self):
        """``{queue: ready jobs}`` of the latest reading, or None when it failed."""
        with self._lock:
            if self._read_at is None or self._clock() - self._read_at >= self.max_age:
                self._depths = self._read_database()
                self._read_at = self._clock()
            return self._depths

    def held_back(self):
        """``{(queue, reason): jobs}`` of the latest reading (:meth:`read` first), or None."""
        with self._lock:
            return self._held_back

    def _read_database(self):
        from ..store import get_store

        store = get_store(self.using)
        try:
            with store.statement_budget(self.statement_seconds):
                if self.session_name:
                    store.name_session(self.session_name)
                depths = ready_depths(self.using, deadline=self._clock() + self.read_seconds, clock=self._clock)
                self._held_back = held_back_counts(self.using)
                return depths
        except DatabaseError as exc:
            self._held_back = None
            logger.warning("Metrics: the ready-jobs gauge could not be read (%s); left out of this scrape.",
                           describe_database_error(exc), extra={"action": "metrics_read_error"})
            return None
        finally:
            connections[self.using].close()


class HeadgateCollector:
    """Scrape-time metrics: ready depth per queue (database) and the maintenance counters."""

    def __init__(self, using, gauges=None):
        self.using = using
        self.gauges = gauges or DatabaseGauges(using)

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        depths = self.gauges.read()
        if depths is not None:
            ready = GaugeMetricFamily("headgate_ready_jobs", "Available jobs due now, per queue "
                                      f"(capped at {READY_DEPTH_CAP}).", labels=["queue"])
            for queue, depth in depths.items():
                ready.add_metric([queue], depth)
            yield ready
        held_back = self.gauges.held_back()
        if held_back is not None:
            family = GaugeMetricFamily("headgate_jobs_held_back", "Jobs waiting on flow control, per queue "
                                       "and reason (concurrency_key, queue_paused).", labels=["queue", "reason"])
            for (queue, reason), count in sorted(held_back.items()):
                family.add_metric([queue, reason], count)
            yield family
        passes = CounterMetricFamily("headgate_duty_passes", "Maintenance passes.", labels=["duty", "outcome"])
        rows = CounterMetricFamily("headgate_duty_rows", "Rows handled by maintenance passes.",
                                   labels=["duty", "outcome"])
        for (duty, outcome), counts in sorted(duty_metrics.snapshot().items()):
            passes.add_metric([duty, outcome], counts.attempts)
            rows.add_metric([duty, outcome], counts.rows)
        yield passes
        yield rows


def ready_depths(using, *, deadline=None, clock=time.monotonic):
    """``{queue: ready jobs}`` by index probes on the calling thread's connection, each count
    capped (``READY_DEPTH_CAP``), at most ``MAX_QUEUES`` queues; queues not reached by
    ``deadline`` (a ``clock`` time) are left out."""
    from ..models import Job, JobState
    from .reader import queues_in_state
    from ..store import get_store

    now = get_store(using).now()
    jobs = Job.objects.using(using).order_by().in_state(JobState.AVAILABLE).filter(run_at__lte=now)
    depths = {}
    for queue in queues_in_state(JobState.AVAILABLE, using=using, limit=MAX_QUEUES):
        if deadline is not None and clock() > deadline:
            break
        depths[queue] = jobs.in_queue(queue)[:READY_DEPTH_CAP].count()
    return depths


def serve_metrics(port, using, addr=DEFAULT_ADDR, session_name=None):
    """Register the collector and the job receivers (once per process); serve ``/metrics`` on
    ``addr``:``port`` (a daemon thread). Returns the HTTP server. Raises MetricsUnavailable
    without prometheus_client, OSError when the port cannot be bound."""
    global _collector
    from ..signals import job_finished

    client = _client()
    job_metrics()
    job_finished.connect(count_finished_job, dispatch_uid="headgate.prometheus.jobs")
    with _lock:
        if _collector is None:
            _collector = HeadgateCollector(using, DatabaseGauges(using, session_name=session_name))
            client.REGISTRY.register(_collector)
    server, _ = client.start_http_server(port, addr=addr)
    return server


def held_back_counts(using):
    """``{(queue, reason): jobs}`` waiting on flow control, for at most ``MAX_QUEUES`` queues."""
    from ..flow.overview import REASON_CONCURRENCY_KEY, REASON_QUEUE_PAUSED, queue_flows

    counts = {}
    for flow in queue_flows(using=using)[:MAX_QUEUES]:
        counts[(flow.queue, REASON_CONCURRENCY_KEY)] = flow.held_back
        if flow.paused:
            counts[(flow.queue, REASON_QUEUE_PAUSED)] = flow.available
    return counts
