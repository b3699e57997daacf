"""The Prometheus collector: ready depth per queue (capped, due jobs only), duty counters, job
counters from job_finished; labels carry no ids."""

from datetime import timedelta

import pytest

pytest.importorskip("prometheus_client")

from prometheus_client import CollectorRegistry  # noqa: E402

import django_headgate as headgate  # noqa: E402
from django_headgate import metrics  # noqa: E402
from django_headgate import prometheus  # noqa: E402

pytestmark = pytest.mark.django_db(transaction=True)


def scrape(using="default"):
    registry = CollectorRegistry()
    registry.register(prometheus.HeadgateCollector(using))
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
    jobs_total, duration = prometheus.job_metrics()
    prometheus.count_finished_job(None, queue="mail", task="app.tasks.send", outcome="succeeded", seconds=0.2,
                                  job_id="0000", worker_id="w1", attempt=1)
    labels = {"queue": "mail", "task": "app.tasks.send", "outcome": "succeeded"}
    assert jobs_total.labels(**labels)._value.get() >= 1
    assert set(jobs_total._labelnames) == {"queue", "task", "outcome"}
    assert set(duration._labelnames) == {"queue", "task"}


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
