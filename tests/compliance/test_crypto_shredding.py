"""Crypto-shredding (DESIGN §18): archived rows under their month's data key, a shredded month
unreadable by any path while other months read, rotation re-wraps every data key."""

import json

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.urls import reverse

import django_headgate as headgate
from django_headgate.compliance.archive_sealing import seal_archive_month, shred_archive_month
from django_headgate.compliance.decryption import SHREDDED, open_job, readable
from django_headgate.conf import get_settings
from django_headgate.exceptions import PayloadShredded, ShredRefused
from django_headgate.maintenance.retention_sweep import RetentionSweepDuty
from django_headgate.models import ArchivedJob, ArchiveKey
from django_headgate.policies import set_archive_policy
from django_headgate.store.archive_layout import month_of_ms
from tests.conftest import subprocess_env
from tests.support.archive_rows import archive_rows
from tests.support.encryption import ENCRYPTED_QUEUE, KEY_B, encryption_env, encryption_settings, raw_rows
from tests.support.retention_rows import make_expired

pytestmark = pytest.mark.django_db(transaction=True)
MARKER = "zq-archive-marker-3391"
SHRED, KEEP = "202603", "202604"


@pytest.fixture
def encrypted():
    with encryption_settings(django_settings.HEADGATE):
        yield


def marked_rows(month, count):
    rows = archive_rows(month, count)
    ArchivedJob.objects.filter(archive_id__in=[r.archive_id for r in rows]).update(
        args=[MARKER], kwargs={"m": MARKER}, result={"r": MARKER},
        errors=[{"attempt": 1, "type": "ValueError", "message": MARKER, "traceback": MARKER}])
    return [r.archive_id for r in rows]


def archive_dump():
    with connection.cursor() as cursor:
        return raw_rows(cursor, "headgate_job_archive") + raw_rows(cursor, "headgate_archive_key")


def test_sealed_months_hold_no_plaintext_and_read_back(encrypted):
    ids = marked_rows(SHRED, 7) + marked_rows(KEEP, 3)
    assert seal_archive_month(SHRED)[:3:2] == (7, True) and seal_archive_month(KEEP)[0] == 3
    assert seal_archive_month(SHRED)[0] == 0  # already sealed: nothing rewritten
    assert MARKER not in archive_dump()
    for archived in ArchivedJob.objects.filter(archive_id__in=ids):
        assert archived.args["key"] in ("archive:202603", "archive:202604")
        open_job(archived)
        assert (archived.args, archived.kwargs, archived.result) == ([MARKER], {"m": MARKER}, {"r": MARKER})
        assert archived.errors[0]["message"] == MARKER and archived.errors[0]["type"] == "ValueError"
    assert set(ArchiveKey.objects.values_list("month", "key_name")) == {(SHRED, "k1"), (KEEP, "k1")}


def test_a_shredded_month_cannot_be_read_by_any_path_while_others_can(encrypted, run_manage, admin_client):
    shredded, kept = marked_rows(SHRED, 4), marked_rows(KEEP, 2)
    seal_archive_month(KEEP)  # SHRED's rows are sealed by the command itself
    done = run_manage("headgate_shred_archive_month", SHRED, "--by", "dpo", env=encryption_env(subprocess_env()))
    assert done.returncode == 0, done.stderr
    assert "4 rows sealed first" in done.stdout
    key = ArchiveKey.objects.get(month=SHRED)
    assert (key.wrapped_key, key.shredded_by) == ("", "dpo") and key.shredded_at is not None
    assert MARKER not in archive_dump()
    for archived in ArchivedJob.objects.filter(archive_id__in=shredded):
        with pytest.raises(PayloadShredded):
            open_job(archived)
        assert readable("args", archived.args) == SHREDDED
        assert readable("errors", archived.errors)[0]["message"] == SHREDDED
        page = admin_client.post(reverse("admin:headgate_archivedjob_reveal", args=[archived.pk])).content.decode()
        assert "shredded" in page and MARKER not in page
    for archived in ArchivedJob.objects.filter(archive_id__in=kept):
        page = admin_client.post(reverse("admin:headgate_archivedjob_reveal", args=[archived.pk])).content.decode()
        assert MARKER in page
    with pytest.raises(PayloadShredded):
        seal_archive_month(SHRED)  # nothing is ever written under a shredded month again


def test_shredding_refuses_open_and_malformed_months_and_held_rows(encrypted, store):
    now_month = "%04d%02d" % month_of_ms(store.archive_now_ms())
    for month, reason in ((now_month, "open_month"), ("2026-03", "invalid_month"), ("202613", "invalid_month")):
        with pytest.raises(ShredRefused) as refused:
            shred_archive_month(month)
        assert refused.value.reason == reason
    ids = marked_rows(SHRED, 2)
    held = ArchivedJob.objects.get(archive_id=ids[0])
    headgate.hold(job_ids=[held.job_id], reason="litigation")
    with pytest.raises(ShredRefused) as refused:
        shred_archive_month(SHRED)
    assert (refused.value.reason, refused.value.held_rows) == ("held", 1)
    assert not ArchiveKey.objects.filter(shredded_at__isnull=False).exists()
    assert shred_archive_month(SHRED, override_hold=True)[1].shredded_at is not None


def test_shredding_without_encryption_settings_is_refused(db):
    with pytest.raises(ShredRefused) as refused:
        shred_archive_month(SHRED)
    assert refused.value.reason == "not_configured"


def test_rotation_rewraps_every_data_key_and_leaves_every_row_readable(encrypted, run_manage):
    ids = marked_rows(SHRED, 2) + marked_rows(KEEP, 2)
    seal_archive_month(SHRED), seal_archive_month(KEEP)
    done = run_manage("headgate_rotate_keys", env=encryption_env(subprocess_env(), ACTIVE="k2"))
    assert done.returncode == 0, done.stderr
    assert "2 archive data keys re-wrapped" in done.stdout
    assert set(ArchiveKey.objects.values_list("key_name", flat=True)) == {"k2"}
    assert all(json.loads(k.wrapped_key)["key"] == "k2" for k in ArchiveKey.objects.all())
    with encryption_settings(django_settings.HEADGATE, KEYS={"k2": KEY_B}, ACTIVE="k2"):  # k1 retired
        for archived in ArchivedJob.objects.filter(archive_id__in=ids):
            assert open_job(archived).args == [MARKER]


def test_the_sweep_archives_encrypted_jobs_under_the_month_key(encrypted, store):
    set_archive_policy(ENCRYPTED_QUEUE, 30 * 86400)
    set_archive_policy("default", 30 * 86400)
    sealed_job = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 1], queue=ENCRYPTED_QUEUE)
    plain_job = headgate.enqueue("tests.testapp.tasks.record", args=[MARKER])
    make_expired([sealed_job, plain_job], store)
    RetentionSweepDuty(store, get_settings()).run_once()
    archived = list(ArchivedJob.objects.filter(job_id__in=[sealed_job.id, plain_job.id]))
    assert len(archived) == 2 and MARKER not in archive_dump()
    assert all(a.args["key"].startswith("archive:") for a in archived)
    assert sorted(json.dumps(open_job(a).args) for a in archived) == sorted(
        [json.dumps([MARKER, 1]), json.dumps([MARKER])])


def test_rotation_reencrypts_hot_rows_and_keeps_their_fingerprints_matching(encrypted, run_manage):
    from django_headgate.models import Job

    waiting = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 1], queue=ENCRYPTED_QUEUE, unique_key="r1")
    running = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 2], queue=ENCRYPTED_QUEUE)
    plain = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 3])
    Job.objects.filter(id=running.id).update(state="running")
    done = run_manage("headgate_rotate_keys", env=encryption_env(subprocess_env(), ACTIVE="k2"))
    assert done.returncode == 0, done.stderr
    assert "1 hot rows re-encrypted; 1 left" in done.stdout
    assert Job.objects.get(id=waiting.id).args["key"] == "k2"
    assert Job.objects.get(id=running.id).args["key"] == "k1"  # its worker still writes: left
    assert Job.objects.get(id=plain.id).args == [MARKER, 3]  # plaintext rows stay as they are
    with encryption_settings(django_settings.HEADGATE, KEYS={"k2": KEY_B}, ACTIVE="k2"):  # k1 retired
        assert headgate.get_job(waiting.id).args == [MARKER, 1]
        again = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 1], queue=ENCRYPTED_QUEUE, unique_key="r1")
        assert again.id == waiting.id  # the keyed fingerprint was recomputed under k2
