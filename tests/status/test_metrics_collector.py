"""The Prometheus collector: ready depth per queue (capped, due jobs only), duty counters, job
counters from job_finished; labels carry no ids and stay bounded; the database is read at most
once per interval, on one connection at a time, under a statement budget."""

import threading
from datetime import timedelta

import pytest

pytest.importorskip("prometheus_client")

from django.db import connection  # noqa: E402
from django.db.backends.signals import connection_created  # noqa: E402
from prometheus_client import CollectorRegistry, generate_latest  # noqa: E402

import django_headgate as headgate  # noqa: E402
from django_headgate import metrics  # noqa: E402
from django_headgate.status import prometheus  # noqa: E402

pytestmark = pytest.mark.django_db(transaction=True)


def scrape(using="default", gauges=None):
    registry = CollectorRegistry()
    registry.register(prometheus.HeadgateCollector(using, gauges or prometheus.DatabaseGauges(using)))
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in registry.collect() for sample in family.samples}


def test_ready_depth_counts_due_available_jobs_per_queue(monkeypatch):
    for _ in range(3):
        headgate.enqueue("tests.testapp.tasks.noop", queue="mail")
    headgate.enqueue("tests.testapp.tasks.noop", queue="mail", delay=timedelta(hours=1))  # not due
    headgate.enqueue("tests.testapp.tasks.noop", queue="reports")
    samples = scrape()
    assert samples[("headgate_ready_jobs", (("queue", "mail"),))] == 3
    assert samples[("headgate_ready_jobs", (("queue", "reports"),))] == 1
    monkeypatch.setattr(prometheus, "READY_DEPTH_CAP", 2)
    assert scrape()[("headgate_ready_jobs", (("queue", "mail"),))] == 2


def test_duty_counters_are_exported():
    metrics.reset()
    metrics.count_pass("rescue", "rescued", 7, False)
    samples = scrape()
    assert samples[("headgate_duty_passes_total", (("duty", "rescue"), ("outcome", "rescued")))] == 1
    assert samples[("headgate_duty_rows_total", (("duty", "rescue"), ("outcome", "rescued")))] == 7
    metrics.reset()


def test_job_counter_and_histogram_labels_carry_no_ids():
    job_metrics = prometheus.job_metrics()
    prometheus.count_finished_job(None, queue="mail", task="tests.testapp.tasks.noop", outcome="succeeded",
                                  seconds=0.2, job_id="0000", worker_id="w1", attempt=1)
    labels = {"queue": "mail", "task": "tests.testapp.tasks.noop", "outcome": "succeeded"}
    assert job_metrics.jobs_total.labels(**labels)._value.get() >= 1
    assert set(job_metrics.jobs_total._labelnames) == {"queue", "task", "outcome"}
    assert set(job_metrics.duration._labelnames) == {"queue", "task"}


def test_labels_stay_bounded_whatever_the_rows_name():
    """2,000 unregistered task paths over 500 queues: one ``other`` task label, at most
    MAX_QUEUE_LABELS queue labels plus ``other``."""
    registry = CollectorRegistry()
    job_metrics = prometheus.JobMetrics(registry)
    job_metrics.count("mail", "tests.testapp.tasks.noop", "succeeded", 0.1)
    for n in range(2000):
        job_metrics.count(f"q{n % 500}", f"app.unregistered_{n}", "dead", 0.1)
    samples = [sample for family in registry.collect() for sample in family.samples
               if sample.name == "headgate_jobs_total"]
    tasks = {sample.labels["task"] for sample in samples}
    queues = {sample.labels["queue"] for sample in samples}
    assert tasks == {"tests.testapp.tasks.noop", "other"}
    assert len(queues) == prometheus.MAX_QUEUE_LABELS + 1 and "other" in queues and "mail" in queues
    assert len(samples) <= (prometheus.MAX_QUEUE_LABELS + 1) * 2
    other = sum(s.value for s in samples if s.labels["task"] == "other")
    assert other == 2000  # nothing lost: counted under the bounded labels


def test_forty_concurrent_scrapes_read_the_database_once_on_one_connection():
    headgate.enqueue("tests.testapp.tasks.noop", queue="mail")
    registry = CollectorRegistry()
    registry.register(prometheus.HeadgateCollector("default"))
    opened, pages = [], []
    start = threading.Barrier(40)

    def count_connection(sender, connection, **kwargs):
        if connection.alias == "default":
            opened.append(threading.get_ident())

    def scrape_once():
        start.wait(30)
        pages.append(generate_latest(registry).decode())

    connection_created.connect(count_connection)
    try:
        threads = [threading.Thread(target=scrape_once) for _ in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        connection_created.disconnect(count_connection)
    assert len(pages) == 40 and all('headgate_ready_jobs{queue="mail"} 1.0' in page for page in pages)
    assert len(opened) == 1, f"{len(opened)} connections opened by 40 concurrent scrapes"


def test_a_reading_serves_every_scrape_until_it_is_older_than_the_interval():
    now = [0.0]
    gauges = prometheus.DatabaseGauges("default", max_age=15, clock=lambda: now[0])
    headgate.enqueue("tests.testapp.tasks.noop", queue="mail")
    assert gauges.read() == {"mail": 1}
    headgate.enqueue("tests.testapp.tasks.noop", queue="mail")
    now[0] = 14.9
    assert gauges.read() == {"mail": 1}  # the same reading: no statement
    now[0] = 15.0
    assert gauges.read() == {"mail": 2}


STATEMENT_BUDGET = {
    "postgresql": "SELECT current_setting('statement_timeout')",
    "mysql": "SELECT @@SESSION.max_statement_time",
}


def test_a_reading_runs_under_the_statement_budget(monkeypatch, vendor):
    if vendor == "sqlite":
        pytest.skip("SQLite has no statement timeout (its busy timeout bounds a reading's waits).")
    seen = []
    real_ready_depths = prometheus.ready_depths

    def ready_depths(using, **kwargs):
        with connection.cursor() as cursor:
            cursor.execute(STATEMENT_BUDGET[vendor], [])
            seen.append(str(cursor.fetchone()[0]))
        return real_ready_depths(using, **kwargs)

    monkeypatch.setattr(prometheus, "ready_depths", ready_depths)
    prometheus.DatabaseGauges("default", statement_seconds=1.5).read()
    assert seen == [{"postgresql": "1500ms", "mysql": "1.5"}[vendor]], seen


def test_a_failed_reading_leaves_the_gauge_out_and_the_rest_is_served(monkeypatch, caplog):
    from django.db import OperationalError

    def unreachable(using, **kwargs):
        raise OperationalError("the database is gone")

    monkeypatch.setattr(prometheus, "ready_depths", unreachable)
    samples = scrape()
    assert not any(name == "headgate_ready_jobs" for name, _ in samples)
    assert "gone" not in caplog.text and "could not be read (OperationalError)" in caplog.text


def test_without_prometheus_client_a_clear_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_prometheus(name, *args, **kwargs):
        if name.startswith("prometheus_client"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_prometheus)
    with pytest.raises(prometheus.MetricsUnavailable, match=r"\[metrics\] extra"):
        prometheus.serve_metrics(0, "default")
