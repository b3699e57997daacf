"""The job and archive lists: a fixed number of queries, no COUNT over the archive, and the
archive list query never loads a payload column."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from django_headgate.store.archive_layout import prepared_layout
from django_headgate.models import JobState

from .rows import make_archived, make_jobs

pytestmark = pytest.mark.django_db

PAYLOAD_COLUMN_RE = re.compile(r"""[."`\s(,](args|kwargs|result|fingerprint)[."`\s),]""")


def archive_queries(queries):
    return [query["sql"] for query in queries if "headgate_job_archive" in query["sql"]]


def count_queries(client, url, params=None):
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, params or {})
    assert response.status_code == 200
    return len(captured.captured_queries), captured.captured_queries


@pytest.mark.parametrize("params", [{}, {"queue": "billing"}, {"terminal_state": "succeeded"},
                                    {"month": "202603"}, {"q": "00000000-0000-0000-0000-000000000000"}])
def test_archive_list_queries_do_not_grow_with_rows(auditor, django_assert_num_queries, params):
    url = reverse("admin:headgate_archivedjob_changelist")
    prepared_layout()  # the partition catalogue is read once per process, not per request
    make_archived(5, queue="billing")
    make_archived(1, queue="emails")
    few, _ = count_queries(auditor, url, params)
    make_archived(45, queue="billing")
    with django_assert_num_queries(few):
        assert auditor.get(url, params).status_code == 200


@pytest.mark.parametrize("params", [{}, {"queue": "billing"}, {"state": "dead"}, {"q": "blue"}])
def test_job_list_queries_do_not_grow_with_rows(auditor, django_assert_num_queries, params):
    url = reverse("admin:headgate_job_changelist")
    make_jobs(5, queue="billing", state=JobState.DEAD)
    few, _ = count_queries(auditor, url, params)
    make_jobs(45, queue="billing", state=JobState.DEAD)
    with django_assert_num_queries(few):
        assert auditor.get(url, params).status_code == 200


def test_archive_list_never_counts_the_archive(auditor, store):
    """PostgreSQL and MySQL/MariaDB read catalogue estimates; SQLite's store counts by design
    (``archive_counts_are_exact``: its archive is a development-sized plain table), once."""
    make_archived(60)
    _, queries = count_queries(auditor, reverse("admin:headgate_archivedjob_changelist"),
                               {"terminal_state": "succeeded"})
    counting = [sql for sql in archive_queries(queries) if "COUNT(" in sql.upper()]
    assert len(counting) == (1 if store.archive_counts_are_exact else 0), counting
    for sql in counting:
        assert "GROUP BY" in sql.upper()  # the store's per-month figures, never the list's total


def test_archive_list_and_detail_never_load_payload_columns(auditor, payload_viewer):
    archived = make_archived(3)
    for client in (auditor, payload_viewer):
        for url in (reverse("admin:headgate_archivedjob_changelist"),
                    reverse("admin:headgate_archivedjob_change", args=[archived[0].pk])):
            _, queries = count_queries(client, url)
            sqls = archive_queries(queries)
            assert sqls, "the page read the archive"
            for sql in sqls:
                assert not PAYLOAD_COLUMN_RE.search(sql), sql


def test_job_list_never_loads_payload_columns(payload_viewer):
    make_jobs(3)
    _, queries = count_queries(payload_viewer, reverse("admin:headgate_job_changelist"))
    job_selects = [q["sql"] for q in queries if "headgate_job" in q["sql"] and "headgate_job_archive" not in q["sql"]]
    assert job_selects
    for sql in job_selects:
        assert not re.search(r"""[."`](args|kwargs|result)[."`]""", sql), sql
