"""PostgreSQL: the worker's and enqueue's hot statements are prepared server-side without any
DATABASES option, and HEADGATE["PREPARED_STATEMENTS"] = False turns that off (PgBouncer)."""

import threading

import pytest
from django.conf import settings
from django.db import IntegrityError, connection, connections
from django.test.utils import override_settings

import django_headgate as headgate
from django_headgate.conf import prepared_statements_enabled
from django_headgate.exceptions import JobIdConflict
from django_headgate.store.base import Completion
from tests.factories import JobFactory

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="server-side prepared statements are PostgreSQL's (mysqlclient binds client-side, SQLite has none)",
)


def prepared_texts():
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def exercise_hot_statements(store):
    JobFactory()
    job = headgate.enqueue("tests.testapp.tasks.noop")
    accepted, claimed = store.acknowledge_and_claim([], "w", None, 5, 30)
    assert len(claimed) == 2
    store.renew_unlocked_leases("w", [(c.id, c.fence) for c in claimed], 30)
    accepted, _ = store.acknowledge_and_claim([Completion(c.id, c.fence, None) for c in claimed], "w", None, 5, 30)
    assert accepted == {c.id for c in claimed}
    return job


def test_hot_statements_are_prepared_by_default(store, db):
    assert prepared_statements_enabled("default")
    exercise_hot_statements(store)
    texts = prepared_texts()
    assert any("INSERT INTO headgate_job" in text for text in texts)
    assert any("FOR UPDATE OF j SKIP LOCKED" in text and "acked" in text for text in texts)
    assert any("lease_expires_at" in text and "ours" in text and "acked" not in text for text in texts)
    # Only Headgate's statements: the host's queries on this connection stay unprepared.
    headgate.get_job(JobFactory().id)
    assert not any("SELECT" in text and "FROM \"headgate_job\"" in text for text in prepared_texts())


@pytest.mark.django_db(transaction=True)
def test_setting_off_prepares_nothing(store):
    found = {}

    def in_a_fresh_session():  # a new thread has its own connection: nothing prepared yet
        try:
            exercise_hot_statements(store)
            found["texts"] = prepared_texts()
        finally:
            connections.close_all()

    with override_settings(HEADGATE={**settings.HEADGATE, "PREPARED_STATEMENTS": False}):
        assert not prepared_statements_enabled("default")
        thread = threading.Thread(target=in_a_fresh_session)
        thread.start()
        thread.join(timeout=60)
    assert found["texts"] == []


def test_explicit_prepare_threshold_none_in_options_prepares_nothing(store, db):
    options = settings.DATABASES["default"].setdefault("OPTIONS", {})
    options["prepare_threshold"] = None
    try:
        assert not prepared_statements_enabled("default")
    finally:
        del options["prepare_threshold"]
    assert prepared_statements_enabled("default")


def test_errors_are_django_errors_on_the_prepared_path(store, db):
    job = headgate.enqueue("tests.testapp.tasks.noop")
    with pytest.raises(JobIdConflict) as raised:
        headgate.enqueue("tests.testapp.tasks.noop", job_id=job.id)
    assert isinstance(raised.value.__cause__, IntegrityError)
