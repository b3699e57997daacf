"""Key rotation of the hot table (DESIGN §18): every value of a hot row encrypted under a key
other than ACTIVE is re-encrypted under ACTIVE, and the row's keyed fingerprint recomputed
with ACTIVE's fingerprint key (so a unique key's replay still matches after the rotation).

Bounded batches (``BATCH_SIZE`` rows read, one transaction each) in id order. A running job is
left alone (its worker appends output and writes its outcome meanwhile), and so is a row claimed
between the read and the write (the update is guarded by state and attempts): run the rotation
again later for those. Archive rows are under their month's data key (``archive_keys.py``,
re-wrapped by ``archive_sealing.rotate_keys``).
"""

import json

from ..conf import get_settings
from ..exceptions import EncryptionUnavailable
from ..store import get_store
from .decryption import open_envelope
from .encryption import (
    ARCHIVE_KEY_PREFIX, MARKER, NO_KWARGS, dump_envelope, is_envelope, keyed_fingerprint, keyring, seal_bytes,
)

BATCH_SIZE = 500
RUNNING = "running"


def reencrypt_hot_rows(using=None, batch_size=BATCH_SIZE):
    """Re-encrypt under ACTIVE the hot rows holding values under another key; returns ``(rows
    rewritten, rows left: running, or claimed between the read and the write)``."""
    ring = keyring()
    if ring is None:
        raise EncryptionUnavailable("HEADGATE['ENCRYPTION'] is not configured: there is no key to rotate to.")
    store = get_store(using or get_settings().database)
    rewritten = skipped = 0
    after = None
    while True:
        with store.atomic():
            rows = store.select_hot_payloads(after, batch_size)
            stale = [row for row in (_rotated(row, ring.active) for row in rows) if row]
            changed = [row for row in stale if row[1] != RUNNING]
            done = store.update_hot_payloads(changed) if changed else 0
        rewritten, skipped = rewritten + done, skipped + len(stale) - done
        if rows:
            after = rows[-1][0]
        if len(rows) < batch_size:
            return rewritten, skipped


def _stale(value, active):
    key = value.get("key") if is_envelope(value) else None
    return isinstance(key, str) and key != active and not key.startswith(ARCHIVE_KEY_PREFIX)


def _reseal(value, active):
    return seal_bytes(open_envelope(value), name=active) if _stale(value, active) else value


def _reseal_text(text, active):
    if isinstance(text, str) and text.startswith("{") and MARKER in text:
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if _stale(value, active):
            return dump_envelope(seal_bytes(open_envelope(value), name=active))
    return text


def _rotated(row, active):
    """The row with its values under ``active`` and its new fingerprint (None: keep it), or None
    when no value of it was under another key."""
    job_id, state, attempts, task, args, kwargs, result, progress, output, errors = row
    values = [_reseal(value, active) for value in (args, kwargs, result, progress)]
    lines = output.split("\n") if isinstance(output, str) else []
    new_lines = [_reseal_text(line, active) for line in lines]
    new_errors = [{k: _reseal_text(v, active) if k in ("message", "traceback") else v for k, v in entry.items()}
                  if isinstance(entry, dict) else entry for entry in errors or []]
    if all(new is old for new, old in zip(values, (args, kwargs, result, progress))) and new_lines == lines \
            and new_errors == (errors or []):
        return None
    fingerprint = None
    if is_envelope(args) and (is_envelope(kwargs) or kwargs == {}):
        kwargs_json = open_envelope(kwargs).decode() if kwargs else NO_KWARGS
        fingerprint = keyed_fingerprint(task, open_envelope(args).decode(), kwargs_json)
    new_output = "\n".join(new_lines) if isinstance(output, str) else output
    return (job_id, state, attempts, task, *values, new_output, new_errors, fingerprint)
