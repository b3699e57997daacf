"""HEADGATE["ENCRYPTION"] for the encryption tests: two fixed keys, one encrypted queue."""

import base64
import json
from contextlib import contextmanager

from django.test import override_settings

KEY_A = base64.urlsafe_b64encode(bytes(range(32))).decode()
KEY_B = base64.urlsafe_b64encode(bytes(range(100, 132))).decode()
ENCRYPTED_QUEUE = "sealed"
ENCRYPTION = {"KEYS": {"k1": KEY_A, "k2": KEY_B}, "ACTIVE": "k1", "QUEUES": [ENCRYPTED_QUEUE]}


@contextmanager
def encryption_settings(settings_headgate, **changes):
    """HEADGATE with ENCRYPTION set (``changes`` replace its keys)."""
    with override_settings(HEADGATE={**settings_headgate, "ENCRYPTION": {**ENCRYPTION, **changes}}):
        yield


def encryption_env(env, **changes):
    """A subprocess environment whose tests/settings.py sets the same ENCRYPTION."""
    return {**env, "HG_TEST_ENCRYPTION": json.dumps({**ENCRYPTION, **changes})}


def raw_rows(cursor, table):
    """Every row of ``table`` as one text, read with a plain cursor (what a table dump shows)."""
    cursor.execute(f"SELECT * FROM {table}")  # noqa: S608 - a fixed table name of the tests
    return repr(cursor.fetchall())
