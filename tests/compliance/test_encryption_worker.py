"""Acceptance (DESIGN §18): an encrypted queue's rows hold no plaintext in a table dump, a worker
process runs its jobs (reading their arguments, writing encrypted results, progress, output and
errors), get_job and the admin show them decrypted."""

import django
import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.urls import reverse

import django_headgate as headgate
from tests.conftest import subprocess_env
from tests.support.encryption import ENCRYPTED_QUEUE, encryption_env, encryption_settings, raw_rows

pytestmark = [pytest.mark.acceptance, pytest.mark.django_db(transaction=True)]
MARKER = "zq-plaintext-marker-8824"


def test_a_worker_runs_encrypted_jobs_and_every_reader_sees_plaintext(run_manage, admin_client):
    with encryption_settings(django_settings.HEADGATE):
        echo = headgate.enqueue("tests.testapp.tasks.encrypted_echo", args=[MARKER])
        failing = headgate.enqueue("tests.testapp.tasks.encrypted_echo", args=[MARKER],
                                   kwargs={"fail": True}, max_attempts=1)
        added = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, "-suffix"], queue=ENCRYPTED_QUEUE)
        done = run_manage("headgate_worker", "--burst", "--queues", f"default,{ENCRYPTED_QUEUE}",
                          env=encryption_env(subprocess_env()), timeout=90)
        assert done.returncode == 0, done.stderr

        with connection.cursor() as cursor:
            dump = raw_rows(cursor, "headgate_job")
        assert MARKER not in dump and "$headgate_enc" in dump

        job = headgate.get_job(echo.id)
        assert (job.state, job.result, job.progress) == ("succeeded", {"echo": MARKER}, {"seen": MARKER})
        assert job.output == f"working on {MARKER}\n"
        assert headgate.get_job(added.id).result == MARKER + "-suffix"
        failed = headgate.get_job(failing.id)
        assert failed.state == "dead"
        assert failed.errors[0]["message"] == f"refused {MARKER}" and MARKER in failed.errors[0]["traceback"]
        assert failed.errors[0]["type"] == "ValueError"  # kept in clear, like the erasure keeps it

        page = admin_client.get(reverse("admin:headgate_job_change", args=[failing.id])).content.decode()
        assert f"refused {MARKER}" in page and "$headgate_enc" not in page
        page = admin_client.get(reverse("admin:headgate_job_change", args=[echo.id])).content.decode()
        assert f"working on {MARKER}" in page and "$headgate_enc" not in page


@pytest.mark.skipif(django.VERSION < (6, 0), reason="the Django Tasks framework needs Django 6.0")
def test_the_tasks_backend_reads_an_encrypted_queues_results(run_manage):
    from tests.testapp import django_tasks

    with encryption_settings(django_settings.HEADGATE, QUEUES=["other"]):
        result = django_tasks.add.using(queue_name="other").enqueue(MARKER, "-x")
        with connection.cursor() as cursor:
            assert MARKER not in raw_rows(cursor, "headgate_job")
        assert django_tasks.add.get_result(result.id).args == [MARKER, "-x"]
        done = run_manage("headgate_worker", "--burst", env=encryption_env(subprocess_env(), QUEUES=["other"]))
        assert done.returncode == 0, done.stderr
        with connection.cursor() as cursor:
            assert MARKER not in raw_rows(cursor, "headgate_job")
        assert django_tasks.add.get_result(result.id).return_value == MARKER + "-x"
