"""enqueue(meta=...): stored apart from the payload under the payload rule, read back by the task
as current_job().meta, shown in the admin without view_job_payload."""

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command

import django_headgate as headgate
from django_headgate.exceptions import HeadgateError, InvalidArguments, PayloadTooLarge
from django_headgate.models import Job


@pytest.mark.django_db(transaction=True)
def test_the_task_reads_its_meta_through_current_job():
    job = headgate.enqueue("tests.testapp.operations_tasks.return_meta", meta={"request_id": "r-42"})
    plain = headgate.enqueue("tests.testapp.operations_tasks.return_meta")
    assert job.meta == {"request_id": "r-42"} and Job.objects.get(pk=job.id).meta == {"request_id": "r-42"}
    assert Job.objects.get(pk=plain.id).meta is None
    call_command("headgate_worker", "--burst", "--worker-id", "meta")
    assert Job.objects.get(pk=job.id).result == {"request_id": "r-42"}
    assert Job.objects.get(pk=plain.id).result == {}


@pytest.mark.django_db
def test_an_idempotent_replay_keeps_the_first_meta():
    first = headgate.enqueue("tests.testapp.tasks.noop", unique_key="k1", meta={"n": 1})
    again = headgate.enqueue("tests.testapp.tasks.noop", unique_key="k1", meta={"n": 2})
    assert again.id == first.id and Job.objects.get(pk=first.id).meta == {"n": 1}


@pytest.mark.django_db
@pytest.mark.parametrize(("meta", "error"), [
    (["not", "a", "dict"], InvalidArguments),
    ({1: "int key"}, InvalidArguments),
    ({"bad": "nul\x00"}, InvalidArguments),
    ({"obj": object()}, InvalidArguments),
    ({"big": "x" * 20_000}, PayloadTooLarge),
])
def test_bad_meta_is_refused_before_any_write(meta, error):
    with pytest.raises(error) as raised:
        headgate.enqueue("tests.testapp.tasks.noop", meta=meta)
    assert isinstance(raised.value, HeadgateError) and raised.value.field == "meta"
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_the_admin_shows_meta_without_the_payload_permission(client):
    job = headgate.enqueue("tests.testapp.tasks.noop", args=["card-4111"], meta={"request_id": "r-7"})
    user = User.objects.create_user("viewer", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_job"))
    client.force_login(user)
    page = client.get(f"/admin/headgate/job/{job.id}/change/").content.decode()
    assert "r-7" in page and "card-4111" not in page
