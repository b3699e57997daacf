"""Only store/ writes headgate_job, the archive and the workflow tables (models.py, store/__init__.py): every statement
that changes them, run by the public API, by the enqueue of both unique modes and by every
maintenance duty, is issued from a module of store/."""

import re
import traceback
from contextlib import contextmanager

import pytest
from django.db import connection

import django_headgate as headgate
from django_headgate import api
from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner
from django_headgate.store.base import Completion

ADD = "tests.testapp.tasks.add"
# A statement that changes the hot table or the archive (not a read: SELECT ... FOR UPDATE is one).
JOB_WRITE = re.compile(r"^\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(\s+TABLE)?)\s+[`\"]?"
                       r"(headgate_job(_archive|_dependency)?|headgate_batch)\b",
                       re.IGNORECASE)
STORE = "/django_headgate/store/"


@contextmanager
def writes_from_outside_the_store():
    """Yield the list of job-table writes issued, on this thread's connection, by no store module."""
    found = []

    def watch(execute, sql, params, many, context):
        if JOB_WRITE.match(sql) and not any(STORE in frame.filename for frame in traceback.extract_stack()):
            found.append(sql.split("\n")[0][:120])
        return execute(sql, params, many, context)

    with connection.execute_wrapper(watch):
        yield found


def finish_every_job(store):
    while claimed := store.claim_jobs("w1", None, 10, 30):
        store.acknowledge_and_claim([Completion(job.id, job.fence, "3") for job in claimed], "w1", None, 0, 30)


@pytest.mark.django_db(transaction=True)
def test_only_the_store_writes_the_job_tables(store):
    with writes_from_outside_the_store() as found:
        first = headgate.enqueue(ADD, args=(1, 2), unique_key="evicted-key")
        assert headgate.enqueue(ADD, args=(1, 2), unique_key="evicted-key").id == first.id
        headgate.enqueue_many([api.JobSpec(ADD, (n, n)) for n in range(3)])
        held = headgate.enqueue(ADD, args=(1, 2), unique_key="finished-key", unique_until="finished")
        api.cancel(first.id)
        api.retry(first.id)
        finish_every_job(store)
        again = headgate.enqueue(ADD, args=(1, 2), unique_key="finished-key", unique_until="finished")
        assert again.id != held.id  # the finished holder's key was released
        MaintenanceRunner(get_settings()).run_once()
    assert found == []


@pytest.mark.django_db(transaction=True)
def test_only_the_store_writes_the_workflow_tables(store):
    with writes_from_outside_the_store() as found:
        parent = headgate.enqueue(ADD, args=(1, 2))
        headgate.enqueue(ADD, args=(2, 3), depends_on=[parent])
        headgate.chain(api.JobSpec(ADD, (1, 1)), api.JobSpec(ADD, (2, 2)))
        with headgate.batch(on_finish=api.JobSpec(ADD, (0, 0))) as b:
            b.enqueue(ADD, args=(3, 3))
            b.enqueue_many([api.JobSpec(ADD, (4, 4))])
        finish_every_job(store)
    assert found == []
    assert headgate.get_batch(b.id).finished_at is not None
