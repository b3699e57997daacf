"""Flow control in the status report and the metrics (DESIGN §15): paused queues, limits and
held-back jobs in ``headgate_status``; ``headgate_jobs_held_back{queue, reason}``."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

import django_headgate as headgate
from tests.factories import JobFactory

pytestmark = pytest.mark.django_db


def status_json():
    out = StringIO()
    call_command("headgate_status", "--json", stdout=out)
    return json.loads(out.getvalue())


def test_status_shows_paused_queues_limits_and_held_back_jobs():
    headgate.pause_queue("emails")
    headgate.set_queue_limits("billing", concurrency=2, rate_limit="5/s")
    JobFactory(queue="emails")
    JobFactory(queue="billing", state="held_back", concurrency_key="account:1", concurrency_limit=1)
    flow = status_json()["flow"]
    assert flow["paused_queues"] == ["emails"]
    assert flow["held_back"] == {"billing": 1}
    assert flow["limits"] == {"billing": {"concurrency": 2, "rate_limit": "5/s"}}
    out = StringIO()
    call_command("headgate_status", stdout=out)
    assert "emails: PAUSED, 1 available, 0 held back" in out.getvalue()


def test_the_held_back_gauge_by_queue_and_reason():
    prometheus = pytest.importorskip("django_headgate.status.prometheus")
    pytest.importorskip("prometheus_client")
    from prometheus_client import CollectorRegistry

    headgate.pause_queue("emails")
    JobFactory(queue="emails"), JobFactory(queue="emails")
    JobFactory(queue="billing", state="held_back", concurrency_key="k", concurrency_limit=1)
    registry = CollectorRegistry()
    registry.register(prometheus.HeadgateCollector("default", prometheus.DatabaseGauges("default")))
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in registry.collect() for s in family.samples}
    assert samples[("headgate_jobs_held_back", (("queue", "billing"), ("reason", "concurrency_key")))] == 1
    assert samples[("headgate_jobs_held_back", (("queue", "emails"), ("reason", "queue_paused")))] == 2
    assert samples[("headgate_jobs_held_back", (("queue", "emails"), ("reason", "concurrency_key")))] == 0
