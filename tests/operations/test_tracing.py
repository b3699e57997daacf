"""The [otel] extra: a PRODUCER span at enqueue, a CONSUMER span per attempt linked to it through
meta (a retried job: two linked consumer spans), seen by the SDK's in-memory exporter."""

import pytest
from django.core.management import call_command
from django.test import override_settings

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.operations.tracing import connect_tracing, disconnect_tracing
from tests.support.waiting import wait_until_due

trace = pytest.importorskip("opentelemetry.trace", reason="the [otel] extra is not installed")
sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
in_memory = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")
export = pytest.importorskip("opentelemetry.sdk.trace.export")

EXPORTER = in_memory.InMemorySpanExporter()


@pytest.fixture
def spans():
    """The process's tracer provider (set once) exporting to memory; tracing on and connected."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, sdk_trace.TracerProvider):
        provider = sdk_trace.TracerProvider()
        provider.add_span_processor(export.SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(provider)
    EXPORTER.clear()
    with override_settings(HEADGATE={"TRACING": True, "RETRY_BACKOFF_BASE": 0.2}):
        assert connect_tracing()
        yield EXPORTER
        disconnect_tracing()


@pytest.mark.django_db(transaction=True)
def test_consumer_spans_of_each_attempt_link_to_the_producer_span(spans):
    job = headgate.enqueue("tests.testapp.operations_tasks.fail_once", meta={"request_id": "r-1"})
    stored = Job.objects.get(pk=job.id).meta
    assert stored["request_id"] == "r-1" and "traceparent" in stored["otel"]
    call_command("headgate_worker", "--burst", "--worker-id", "t1")
    wait_until_due(job.id)
    call_command("headgate_worker", "--burst", "--worker-id", "t2")
    assert Job.objects.get(pk=job.id).state == "succeeded"

    finished = spans.get_finished_spans()
    (producer,) = [span for span in finished if span.kind == trace.SpanKind.PRODUCER]
    consumers = sorted((span for span in finished if span.kind == trace.SpanKind.CONSUMER),
                       key=lambda span: span.attributes["headgate.attempt"])
    assert [span.attributes["headgate.attempt"] for span in consumers] == [1, 2]
    assert [span.attributes["headgate.outcome"] for span in consumers] == ["retrying", "succeeded"]
    for consumer in consumers:
        assert [link.context.span_id for link in consumer.links] == [producer.context.span_id]
        assert consumer.attributes["headgate.job_id"] == str(job.id)
    assert all("r-1" not in str(dict(span.attributes)) for span in finished)  # meta is not copied


@pytest.mark.django_db
def test_tracing_off_adds_nothing_to_meta():
    job = headgate.enqueue("tests.testapp.tasks.noop")
    assert Job.objects.get(pk=job.id).meta is None
    assert not connect_tracing()
