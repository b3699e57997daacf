"""Archive month data keys (DESIGN §18, table ``headgate_archive_key``).

Each archive month has one data key (32 random bytes) under which its rows' payloads are
encrypted (``archive_sealing.py``). The key is stored only *wrapped*: the JSON envelope of its
bytes under a key of ``HEADGATE["ENCRYPTION"]`` (``key_name``). Its envelopes name it
``archive:YYYYMM``. Shredding empties the wrapped key: from that moment no process can decrypt
the month (nothing caches a month key between calls). Rotation re-wraps every data key under
the ACTIVE key.
"""

import base64
import json
import logging
import os
import re

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..conf import get_settings
from ..exceptions import EncryptionUnavailable, PayloadShredded
from ..models import ArchiveKey
from .decryption import open_envelope
from .encryption import AESGCM, ARCHIVE_KEY_PREFIX, KEY_BYTES, keyring, seal_bytes

logger = logging.getLogger(__name__)

MONTH_RE = re.compile(r"[0-9]{4}(0[1-9]|1[0-2])")


def month_key_name(month):
    """The key name archive envelopes carry for ``month`` ("YYYYMM")."""
    return f"{ARCHIVE_KEY_PREFIX}{month}"


def month_cipher(name):
    """The AES-GCM cipher of the archive key ``name`` (``archive:YYYYMM``), read from the table
    each time. Raises PayloadShredded when it was shredded (or never existed)."""
    month = name[len(ARCHIVE_KEY_PREFIX):]
    row = ArchiveKey.objects.using(get_settings().database).filter(month=month).first()
    if row is None or row.shredded_at is not None or not row.wrapped_key:
        raise PayloadShredded(f"The archive month {month}'s data key was shredded: its payloads "
                              "cannot be read.", month=month)
    return AESGCM(_unwrap(row))


def month_data_key(month, using=None):
    """``(name, data key bytes)`` of ``month``, made (and stored wrapped under the ACTIVE key)
    when it has none. Raises PayloadShredded for a shredded month and EncryptionUnavailable when
    encryption is not configured."""
    alias = using or get_settings().database
    ring = keyring()
    if ring is None:
        raise EncryptionUnavailable("HEADGATE['ENCRYPTION'] is not configured: no archive key can be made.")
    row = ArchiveKey.objects.using(alias).filter(month=month).first()
    if row is None:
        data_key = os.urandom(KEY_BYTES)
        try:
            with transaction.atomic(using=alias):
                row = ArchiveKey.objects.using(alias).create(
                    month=month, wrapped_key=_wrap(data_key, ring.active), key_name=ring.active)
            logger.info("Archive data key of %s made.", month,
                        extra={"action": "archive_key_created", "month": month, "key": ring.active})
            return month_key_name(month), data_key
        except IntegrityError:  # another process made it first: use theirs
            row = ArchiveKey.objects.using(alias).get(month=month)
    if row.shredded_at is not None or not row.wrapped_key:
        raise PayloadShredded(f"The archive month {month} is shredded.", month=month)
    return month_key_name(month), _unwrap(row)


def shred_month_key(month, by, using=None):
    """Destroy ``month``'s data key (made first if it has none, so the month reads as shredded);
    returns the ArchiveKey row. Shredding a shredded month changes nothing."""
    alias = using or get_settings().database
    try:
        month_data_key(month, alias)
    except PayloadShredded:
        return ArchiveKey.objects.using(alias).get(month=month)
    ArchiveKey.objects.using(alias).filter(month=month, shredded_at__isnull=True).update(
        wrapped_key="", shredded_at=timezone.now(), shredded_by=by)
    logger.warning("Archive month %s shredded by %s: its payloads can no longer be read.", month, by,
                   extra={"action": "archive_month_shredded", "month": month, "by": by})
    return ArchiveKey.objects.using(alias).get(month=month)


def rewrap_month_keys(using=None):
    """Re-wrap every unshredded data key not wrapped by the ACTIVE key under it, one row per
    transaction; returns how many were re-wrapped."""
    alias = using or get_settings().database
    ring = keyring()
    if ring is None:
        raise EncryptionUnavailable("HEADGATE['ENCRYPTION'] is not configured: there is no key to rotate to.")
    rewrapped = 0
    for row in ArchiveKey.objects.using(alias).filter(shredded_at__isnull=True).exclude(key_name=ring.active):
        data_key = _unwrap(row)
        with transaction.atomic(using=alias):
            changed = ArchiveKey.objects.using(alias).filter(pk=row.pk, key_name=row.key_name,
                                                             shredded_at__isnull=True).update(
                wrapped_key=_wrap(data_key, ring.active), key_name=ring.active)
        rewrapped += changed
    return rewrapped


def _wrap(data_key, name):
    return json.dumps(seal_bytes(base64.b64encode(data_key), name=name), separators=(",", ":"))


def _unwrap(row):
    return base64.b64decode(open_envelope(json.loads(row.wrapped_key)))
