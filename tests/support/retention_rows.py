"""Rows for the retention and archive tests, made through the API and the ORM (no mocks)."""

from datetime import timedelta

from django_headgate import api
from django_headgate.models import Job

TERMINAL = ("succeeded", "dead", "cancelled")


def enqueue(queue="default", **kwargs):
    return api.enqueue("tests.testapp.tasks.noop", queue=queue, **kwargs)


def make_expired(jobs, store, *, state="succeeded", ago=timedelta(hours=1)):
    """Turn jobs terminal with an expires_at in the past by the store clock."""
    now = store.now()
    ids = [job.id for job in jobs]
    Job.objects.filter(id__in=ids).update(state=state, finished_at=now - ago * 2, expires_at=now - ago)
    return ids


def expired_jobs(store, count, *, queue="default", state="succeeded", **kwargs):
    return make_expired([enqueue(queue, **kwargs) for _ in range(count)], store, state=state)
