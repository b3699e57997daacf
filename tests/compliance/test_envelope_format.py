"""The envelope format (docs/compliance.md): what is written, that rows written by the earlier
code (one base64 call per field, the envelope dumped from a dict) stay readable, and that a
nonce is never handed out twice, across threads or a fork."""

import base64
import hashlib
import json
import os
import threading

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings as django_settings
from django.db import connection

import django_headgate as headgate
from django_headgate.compliance import encryption
from django_headgate.models import Job
from tests.conftest import subprocess_env
from tests.support.encryption import ENCRYPTED_QUEUE, KEY_A, encryption_env, encryption_settings, raw_rows

MARKER = "zq-plaintext-marker-3071"


@pytest.fixture
def encrypted():
    with encryption_settings(django_settings.HEADGATE):
        yield


def _envelope_as_written_before(plain_json, key_name="k1", key=KEY_A):
    """An envelope the way the code before the single-call layout built it: a fresh
    ``os.urandom(12)`` nonce, each field through ``base64.b64encode``, then a dict."""
    nonce = os.urandom(12)
    ct = AESGCM(base64.urlsafe_b64decode(key)).encrypt(nonce, plain_json.encode(), None)
    return {"$headgate_enc": 1, "key": key_name, "nonce": base64.b64encode(nonce).decode(),
            "ct": base64.b64encode(ct).decode()}


def test_a_new_envelope_has_the_documented_fields_and_opens_with_the_key_alone(encrypted):
    text = encryption.sealed_json('["' + MARKER + '"]')
    envelope = json.loads(text)
    assert set(envelope) == {"$headgate_enc", "key", "nonce", "ct"}
    assert (envelope["$headgate_enc"], envelope["key"]) == (1, "k1")
    nonce = base64.b64decode(envelope["nonce"], validate=True)
    assert len(nonce) == 12
    ciphertext = base64.b64decode(envelope["ct"], validate=True)
    plain = AESGCM(base64.urlsafe_b64decode(KEY_A)).decrypt(nonce, ciphertext, None)
    assert plain == f'["{MARKER}"]'.encode()
    assert text == encryption.dump_envelope(envelope)  # the same text the dict dumper gives


def test_the_keyed_fingerprint_is_the_one_rows_already_hold(encrypted):
    fingerprint_key = hashlib.blake2b(b"headgate fingerprint v1", key=base64.urlsafe_b64decode(KEY_A)).digest()
    expected = hashlib.blake2b(f"t.task\n[\"{MARKER}\"]\n{{}}".encode(), digest_size=32, key=fingerprint_key)
    assert encryption.keyed_fingerprint("t.task", f'["{MARKER}"]', "{}") == expected.hexdigest()


def test_nonces_are_unique_across_threads():
    taken = [[] for _ in range(4)]

    def take(into):
        into.extend(encryption._nonces.take() for _ in range(3000))  # several pool refills each

    threads = [threading.Thread(target=take, args=(into,)) for into in taken]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [nonce for into in taken for nonce in into]
    assert len(every) == 12_000 and len(set(every)) == 12_000
    assert all(len(nonce) == 12 for nonce in every)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_does_not_reuse_the_parents_nonces():
    encryption._nonces.take()  # the parent's pool now holds unused nonces the child would inherit
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: send 100 nonces and leave at once
        try:
            os.write(write_end, b"".join(encryption._nonces.take() for _ in range(100)))
        finally:
            os._exit(0)
    os.close(write_end)
    received = b""
    while chunk := os.read(read_end, 4096):
        received += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    child = {received[at:at + 12] for at in range(0, len(received), 12)}
    parent = {encryption._nonces.take() for _ in range(100)}
    assert len(child) == 100 and not child & parent


@pytest.mark.acceptance
@pytest.mark.django_db(transaction=True)
def test_rows_written_in_the_earlier_layout_stay_readable_by_every_reader(run_manage):
    with encryption_settings(django_settings.HEADGATE):
        job = headgate.enqueue("tests.testapp.tasks.add", args=[MARKER, "-old"], queue=ENCRYPTED_QUEUE)
        # Stored through the ORM: its JSON dump (", " and ": ") on MariaDB and SQLite, jsonb's
        # own rendering on PostgreSQL; readers must not depend on the compact layout.
        Job.objects.filter(id=job.id).update(args=_envelope_as_written_before(f'["{MARKER}","-old"]'),
                                             kwargs=_envelope_as_written_before("{}"))
        stored = Job.objects.get(id=job.id)
        assert stored.args["key"] == "k1" and stored.kwargs["key"] == "k1"
        assert headgate.get_job(job.id).args == [MARKER, "-old"]
        done = run_manage("headgate_worker", "--burst", "--queues", ENCRYPTED_QUEUE,
                          env=encryption_env(subprocess_env()), timeout=90)
        assert done.returncode == 0, done.stderr
        finished = headgate.get_job(job.id)
        assert (finished.state, finished.result) == ("succeeded", MARKER + "-old")
        with connection.cursor() as cursor:
            assert MARKER not in raw_rows(cursor, "headgate_job")
