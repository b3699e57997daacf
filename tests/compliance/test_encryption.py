"""Payload encryption at rest (DESIGN §18): what is stored, what readers see, the checks."""

import json

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db import connection

import django_headgate as headgate
from django_headgate.checks import check_encryption
from django_headgate.compliance.decryption import open_job, opened_arguments
from django_headgate.compliance.encryption import stored_payload
from django_headgate.exceptions import EncryptionUnavailable, IdempotencyConflict
from django_headgate.models import Job
from django_headgate.values.job_options import fingerprint
from tests.support.encryption import ENCRYPTED_QUEUE, KEY_B, encryption_settings, raw_rows

pytestmark = pytest.mark.django_db(transaction=True)
MARKER = "zq-plaintext-marker-5510"


@pytest.fixture
def encrypted():
    with encryption_settings(django_settings.HEADGATE):
        yield


def test_an_encrypted_queues_rows_hold_no_plaintext_and_read_back_decrypted(encrypted):
    job = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 1], kwargs={}, queue=ENCRYPTED_QUEUE)
    many = headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.record", args=(MARKER,),
                                                   queue=ENCRYPTED_QUEUE) for _ in range(3)])
    plain = headgate.enqueue("tests.testapp.tasks.record", args=["visible-plain"])
    with connection.cursor() as cursor:
        dump = raw_rows(cursor, "headgate_job")
    assert MARKER not in dump and "visible-plain" in dump and "$headgate_enc" in dump
    assert job.args == [MARKER, 1]  # the returned Job holds the plaintext
    assert headgate.get_job(job.id).args == [MARKER, 1]
    assert [headgate.get_job(job_id).args for job_id in many] == [[MARKER]] * 3
    assert headgate.get_job(plain.id).args == ["visible-plain"]
    stored = Job.objects.get(id=job.id)
    assert stored.args["key"] == "k1" and stored.kwargs == {}  # no keyword arguments: nothing to seal
    keyed = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER], kwargs={"b": MARKER + "-kw"},
                             queue=ENCRYPTED_QUEUE)
    assert Job.objects.get(id=keyed.id).kwargs["key"] == "k1"
    assert headgate.get_job(keyed.id).kwargs == {"b": MARKER + "-kw"}


def test_a_task_registered_with_encrypt_true_is_encrypted_on_any_queue(encrypted):
    job = headgate.enqueue("tests.testapp.tasks.encrypted_echo", args=[MARKER], queue="default")
    with connection.cursor() as cursor:
        assert MARKER not in raw_rows(cursor, "headgate_job")
    assert headgate.get_job(job.id).args == [MARKER]


def test_an_encrypt_true_task_without_encryption_settings_is_refused_before_writing(db):
    with pytest.raises(EncryptionUnavailable):
        headgate.enqueue("tests.testapp.tasks.encrypted_echo", args=[MARKER])
    assert not Job.objects.exists()


def test_fingerprints_are_keyed_and_still_match_equal_payloads(encrypted):
    first = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 2], queue=ENCRYPTED_QUEUE, unique_key="u1")
    again = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 2], queue=ENCRYPTED_QUEUE, unique_key="u1")
    assert again.id == first.id
    with pytest.raises(IdempotencyConflict):
        headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 3], queue=ENCRYPTED_QUEUE, unique_key="u1")
    plain = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 2], unique_key="u2")
    assert Job.objects.get(id=first.id).fingerprint != plain.fingerprint  # not the bare SHA-256


def test_rows_under_a_retired_key_stay_readable_while_it_is_in_keys(encrypted):
    job = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 1], queue=ENCRYPTED_QUEUE)
    with encryption_settings(django_settings.HEADGATE, ACTIVE="k2"):
        newer = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 2], queue=ENCRYPTED_QUEUE)
        assert Job.objects.get(id=newer.id).args["key"] == "k2"
        assert headgate.get_job(job.id).args == [MARKER, 1]
    with encryption_settings(django_settings.HEADGATE, KEYS={"k2": KEY_B}, ACTIVE="k2"):
        with pytest.raises(EncryptionUnavailable, match="k1"):
            headgate.get_job(job.id)  # lost key, lost data
        assert headgate.get_job(newer.id).args == [MARKER, 2]


def test_an_altered_ciphertext_does_not_decrypt(encrypted):
    job = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, 1], queue=ENCRYPTED_QUEUE)
    stored = Job.objects.get(id=job.id)
    other = Job.objects.get(id=headgate.enqueue("tests.testapp.tasks.add", args=[9, 9], queue=ENCRYPTED_QUEUE).id)
    stored.args = {**stored.args, "ct": other.args["ct"]}  # right key, nonce of another value
    with pytest.raises(EncryptionUnavailable, match="does not decrypt"):
        open_job(stored)


def test_a_worker_reads_an_envelope_as_written_and_refuses_it_altered(encrypted):
    args_json, kwargs_json, _ = stored_payload("tests.testapp.tasks.add", ENCRYPTED_QUEUE, f'["{MARKER}",1]',
                                               '{"b":2}', fingerprint)
    assert opened_arguments(args_json, kwargs_json, True) == ([MARKER, 1], {"b": 2})  # as written
    rendered = [json.dumps(json.loads(text)) for text in (args_json, kwargs_json)]  # ", " and ": "
    assert opened_arguments(*rendered, True) == ([MARKER, 1], {"b": 2})
    at = args_json.index('"ct":"') + 6
    altered = args_json[:at] + ("B" if args_json[at] == "A" else "A") + args_json[at + 1:]
    with pytest.raises(EncryptionUnavailable, match="does not decrypt"):
        opened_arguments(altered, kwargs_json, True)


@pytest.mark.parametrize(("encryption", "fragment"), [
    ({"KEYS": {"k": "short"}, "ACTIVE": "k"}, "32 bytes"),
    ({"KEYS": {"k": KEY_B}, "ACTIVE": "other"}, "ACTIVE"),
    ({"KEYS": {}, "ACTIVE": "k"}, "non-empty"),
    ({"KEYS": {"k": KEY_B}, "ACTIVE": "k", "QUEUES": "billing"}, "QUEUES"),
    ({"KEYS": {"k": KEY_B}, "ACTIVE": "k", "QUEUE": ["x"]}, "not an encryption setting"),
    ({"KEYS": {"bad name!": KEY_B}, "ACTIVE": "bad name!"}, "key name"),
])
def test_system_checks_name_each_bad_encryption_setting(settings, encryption, fragment):
    settings.HEADGATE = {**settings.HEADGATE, "ENCRYPTION": encryption}
    messages = check_encryption()
    assert messages and all(m.id == "headgate.E050" for m in messages)
    assert any(fragment in m.msg for m in messages)
    with pytest.raises(EncryptionUnavailable):
        headgate.enqueue("tests.testapp.tasks.add", args=[1, 2])
    assert not Job.objects.exists()


def test_valid_settings_pass_the_checks(encrypted):
    assert check_encryption() == []
    call_command("check", "--tag", "headgate")
