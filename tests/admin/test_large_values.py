"""The admin never renders unbounded text: each result, argument, progress, output, error message
and traceback shows its first (output and tracebacks: last) DISPLAY_MAX_CHARS characters and
counts the rest. Rows written before HEADGATE["MAX_RESULT_BYTES"] existed can hold megabytes."""

import pytest
from django.urls import reverse

from django_headgate.admin.display import DISPLAY_MAX_CHARS
from django_headgate.models import Job, JobState

from .rows import make_jobs

pytestmark = pytest.mark.django_db

BIG = 2 * 1024 * 1024  # each value; the rows' statements stay under MariaDB's 16 MiB packet


def test_the_detail_page_shows_a_bounded_part_of_each_value(payload_viewer):
    job = make_jobs(1, state=JobState.DEAD)[0]
    rows = Job.objects.filter(pk=job.pk)
    rows.update(result={"text": "R" * BIG})
    rows.update(args=["A" * BIG])
    rows.update(progress={"note": "P" * BIG})
    rows.update(output="O" * BIG)
    rows.update(errors=[{"attempt": 1, "type": "ValueError", "message": "M" * BIG, "traceback": "T" * BIG}])
    response = payload_viewer.get(reverse("admin:headgate_job_change", args=[job.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    assert len(body) < 8 * DISPLAY_MAX_CHARS  # six values, and the page around them
    for letter in "RAPOMT":  # shown up to the bound (less the JSON around a value), never beyond
        assert letter * (DISPLAY_MAX_CHARS - 100) in body and letter * (DISPLAY_MAX_CHARS + 1) not in body
    assert body.count("more characters not shown.") == 4  # result, args, progress, message
    assert body.count("earlier characters not shown.") == 2  # output, traceback (their tails)
