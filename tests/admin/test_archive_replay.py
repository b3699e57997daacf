"""Replay from the archive: a new job copied from an archived one, needing view_job_payload and
replay_archived_job, asking for a reason, logged like a reveal."""

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.urls import reverse

from django_headgate.models import Job

from .conftest import VIEW_PERMISSIONS, client_for, make_user
from .rows import SECRET_ARG, SECRET_KWARG, make_archived

pytestmark = pytest.mark.django_db
REPLAYER = VIEW_PERMISSIONS + ("view_job_payload", "replay_archived_job")


def replay(client, archived, reason="customer asked for the invoice again"):
    return client.post(reverse("admin:headgate_archivedjob_replay", args=[archived.pk]),
                       {"reason": reason}, follow=True)


def test_replay_enqueues_a_copy_and_logs_the_reason():
    (archived,) = make_archived(1, queue="billing", state="dead")
    client = client_for(make_user("replayer", REPLAYER))
    page = client.get(reverse("admin:headgate_archivedjob_change", args=[archived.pk])).content.decode()
    assert "headgate-replay-button" in page
    response = replay(client, archived)
    job = Job.objects.get()
    assert job.id != archived.job_id and response.redirect_chain[-1][0].endswith(f"/{job.pk}/change/")
    assert (job.task, job.args, job.kwargs, job.queue, job.tags, job.state) == (
        archived.task, [SECRET_ARG, 0], {"password": SECRET_KWARG}, "billing", ["audit"], "available")
    assert job.meta == {"replayed_from": str(archived.job_id), "replayed_from_archive_id": str(archived.archive_id)}
    (entry,) = LogEntry.objects.filter(action_flag=CHANGE)
    assert entry.object_id == str(archived.pk) and entry.user.username == "replayer"
    assert entry.get_change_message() == (f"Replayed archived job {archived.job_id} as the new job {job.id}. "
                                          "Reason: customer asked for the invoice again")


def test_replay_needs_a_reason():
    (archived,) = make_archived(1)
    response = replay(client_for(make_user("replayer", REPLAYER)), archived, reason="  ")
    assert any("needs a reason" in str(m) for m in response.context["messages"])
    assert not Job.objects.exists() and not LogEntry.objects.exists()


@pytest.mark.parametrize("codenames", [
    VIEW_PERMISSIONS + ("replay_archived_job",),
    VIEW_PERMISSIONS + ("view_job_payload", "view_archive_payload"),
    ("view_job_payload", "replay_archived_job"),
])
def test_replay_needs_both_permissions_and_the_view(codenames):
    (archived,) = make_archived(1)
    client = client_for(make_user("someone", codenames))
    assert replay(client, archived).status_code == 403
    if "view_archivedjob" in codenames:
        page = client.get(reverse("admin:headgate_archivedjob_change", args=[archived.pk])).content.decode()
        assert "headgate-replay-button" not in page
    assert client.get(reverse("admin:headgate_archivedjob_replay", args=[archived.pk])).status_code in (403, 405)
    assert not Job.objects.exists() and not LogEntry.objects.exists()
