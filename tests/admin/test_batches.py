"""The batches page (admin/batches.py): a batch's progress, and links to its members and callbacks."""

import pytest

import django_headgate as headgate
from django_headgate import testing

STEP = "tests.testapp.workflow_tasks.step"

pytestmark = pytest.mark.django_db


def test_a_batch_shows_its_progress_and_links_its_members(auditor, staff):
    with headgate.batch(on_finish=headgate.JobSpec(STEP, ("done",))) as b:
        members = [b.enqueue(STEP, args=(str(n),)) for n in range(4)]
    testing.drain(max_jobs=1)
    page = auditor.get("/admin/headgate/batch/")
    assert page.status_code == 200
    assert "1 / 4 (25%)" in page.content.decode()
    detail = auditor.get(f"/admin/headgate/batch/{b.id}/change/").content.decode()
    assert f"?batch_id={b.id}" in detail and "on_finish" in detail
    listed = auditor.get(f"/admin/headgate/job/?batch_id={b.id}").content.decode()
    assert all(str(m.id)[-12:] in listed for m in members)
    assert b.callback_ids["on_finish"].hex[-12:] not in listed.replace("-", "")
    assert staff.get("/admin/headgate/batch/").status_code == 403
