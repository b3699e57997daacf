"""OpenTelemetry spans (the optional ``[otel]`` extra, ``HEADGATE["TRACING"] = True``): a
PRODUCER span around ``enqueue()``, whose context travels in the job's ``meta["otel"]``, and a
CONSUMER span per attempt, linked to it (a retried job's attempts are so many linked spans).

Nothing here runs unless tracing is on: ``connect_tracing()`` (called from ``apps.ready()``)
connects the worker's ``job_started`` / ``job_finished`` receivers only then, so the drain pays
nothing otherwise. Spans carry the queue, task and attempt, never payload."""

import threading
from contextlib import contextmanager, nullcontext

from ..conf import get_settings
from ..signals import job_finished, job_started
from ..store import get_store

#: Where the producer's context is kept in ``meta``.
META_KEY = "otel"
TRACER_NAME = "django_headgate"
_spans = threading.local()


def tracing_enabled():
    """``HEADGATE["TRACING"]`` is on and the ``[otel]`` extra is installed."""
    if not get_settings().tracing:
        return False
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        return False
    return True


def producer_span(task, queue):
    """A context manager around an enqueue: yields the carrier (a dict) to store in
    ``meta["otel"]``, or None when tracing is off; the yielded span records the job id."""
    return _producer_span(task, queue) if tracing_enabled() else nullcontext(None)


@contextmanager
def _producer_span(task, queue):
    from opentelemetry import propagate, trace

    tracer = trace.get_tracer(TRACER_NAME)
    with tracer.start_as_current_span(f"{task} publish", kind=trace.SpanKind.PRODUCER,
                                      attributes=_attributes(queue, task, "publish")):
        carrier = {}
        propagate.inject(carrier)
        yield carrier


def connect_tracing():
    """Connect the consumer-span receivers when tracing is on; returns whether it did."""
    if not tracing_enabled():
        return False
    job_started.connect(start_consumer_span, dispatch_uid="headgate.tracing.started")
    job_finished.connect(end_consumer_span, dispatch_uid="headgate.tracing.finished")
    return True


def disconnect_tracing():
    job_started.disconnect(dispatch_uid="headgate.tracing.started")
    job_finished.disconnect(dispatch_uid="headgate.tracing.finished")


def start_consumer_span(sender, job_id, queue, task, attempt, worker_id, **kwargs):
    """``job_started`` receiver (the job's thread): a CONSUMER span linked to the producer's."""
    from opentelemetry import propagate, trace

    carrier = get_store(get_settings().database).read_job_meta(job_id).get(META_KEY) or {}
    producer = trace.get_current_span(propagate.extract(carrier)).get_span_context()
    links = [trace.Link(producer)] if producer.is_valid else []
    span = trace.get_tracer(TRACER_NAME).start_span(
        f"{task} process", kind=trace.SpanKind.CONSUMER, links=links,
        attributes={**_attributes(queue, task, "process"), "headgate.job_id": str(job_id),
                    "headgate.attempt": attempt})
    _open_spans()[job_id] = span


def end_consumer_span(sender, job_id, outcome, **kwargs):
    """``job_finished`` receiver: the attempt's span ends with its outcome."""
    from opentelemetry import trace

    span = _open_spans().pop(job_id, None)
    if span is None:
        return
    span.set_attribute("headgate.outcome", outcome)
    if outcome != "succeeded":
        span.set_status(trace.Status(trace.StatusCode.ERROR, outcome))
    span.end()


def _open_spans():
    if not hasattr(_spans, "by_job"):
        _spans.by_job = {}
    return _spans.by_job


def _attributes(queue, task, operation):
    return {"messaging.system": "headgate", "messaging.destination.name": queue,
            "messaging.operation": operation, "headgate.task": task}
