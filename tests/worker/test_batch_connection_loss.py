"""A batch statement that loses the connection whenever one row is in it (a result too large for
MariaDB's max_allowed_packet drops the connection: error 2006) never holds the other jobs of its
batch: after a second loss its rows are written one by one, the others are acknowledged, and the
row that keeps losing the connection fails with a storable ResultNotStored. The loss is real: the
server ends the worker's connection (pg_terminate_backend, KILL CONNECTION) as the statement
carrying that row is sent."""

import pytest
from django.db import connections

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.worker import Worker

pytestmark = pytest.mark.django_db(transaction=True)

KILL = {"postgresql": "SELECT pg_terminate_backend(%s)", "mysql": "KILL CONNECTION %s"}


def own_session_id(connection):
    raw = connection.connection
    return raw.info.backend_pid if connection.vendor == "postgresql" else raw.thread_id()


def end_session(alias, session_id):
    """End a session from a connection of its own, as the server does when it drops a client."""
    other = connections.create_connection(alias)
    try:
        with other.cursor() as cursor:
            cursor.execute(KILL[other.vendor], [session_id])
    finally:
        other.close()


def test_a_row_that_drops_the_connection_does_not_hold_its_batch(store):
    if store.vendor == "sqlite":
        pytest.skip("SQLite has no server connection to lose")
    poisoned = headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(0.3, "big"), max_attempts=1).id
    neighbours = [headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(0.3, n)).id for n in range(11)]
    worker = Worker(burst=True, concurrency=4, lease_seconds=10)
    acknowledge_and_claim = worker.store.acknowledge_and_claim
    lost_batches = []

    def losing_the_connection(completions, *args):
        ids = [c.job_id for c in completions]
        if poisoned in ids:
            lost_batches.append(ids)
            end_session(worker.store.alias, own_session_id(worker.store.connection))
        return acknowledge_and_claim(completions, *args)

    worker.store.acknowledge_and_claim = losing_the_connection
    stats = worker.run()
    assert any(len(batch) > 1 for batch in lost_batches), lost_batches  # it did share a batch
    rows = Job.objects.in_bulk([poisoned, *neighbours])
    assert [rows[n].state for n in neighbours] == ["succeeded"] * 11
    assert sorted(rows[n].result for n in neighbours) == list(range(11))
    assert rows[poisoned].state == "dead"
    assert rows[poisoned].errors[-1]["type"] == "ResultNotStored"
    assert (stats.succeeded, stats.dead, stats.given_up, stats.abandoned) == (11, 1, 0, 0)
