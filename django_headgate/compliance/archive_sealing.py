"""Crypto-shredding (DESIGN §18): archived rows encrypted under their month's data key, and a
month shredded by destroying that key.

When ``HEADGATE["ENCRYPTION"]`` is configured, every row that enters the archive (of any queue)
has its args, kwargs, result and error messages/tracebacks re-encrypted under the data key of
its archive month (``archive_keys.py``): :func:`seal_recent_archive` does it after every pass of
the retention sweep (the receiver is connected in ``apps.ready()``), for the current and the
previous month, in bounded batches. :func:`shred_archive_month` first seals whatever row of the
month is left (a full walk), then destroys the month's key, so at that moment every payload of
the month is unreadable by any path (the admin reveal says "shredded"); the month is still
pruned by its TRUNCATE later. Only a closed month (before the store clock's month) can be
shredded; one holding rows under an unreleased legal hold is refused unless overridden.
"""

import json
import logging
import uuid

from ..conf import get_settings
from ..exceptions import EncryptionUnavailable, HeadgateError, PayloadShredded, ShredRefused
from ..models import ArchiveKey
from ..signals import duty_finished
from ..store import get_store
from ..store.archive_layout import month_of_ms, month_partition, prepared_layout
from .archive_keys import MONTH_RE, month_data_key, rewrap_month_keys, shred_month_key
from .decryption import open_text, open_value
from .hot_rotation import reencrypt_hot_rows
from .encryption import is_envelope, keyring, seal_bytes

logger = logging.getLogger(__name__)

BATCH_SIZE = 500
SWEEP_DUTY = "retention_sweep"
#: How far back (ms) a pass re-reads before its cursor: rows a slower sweep committed late.
CURSOR_MARGIN_MS = 10 * 60 * 1000
#: Batches of one month a sweep's sealing pass runs at most (the next pass goes on).
MAX_BATCHES_PER_PASS = 100
NIL_UUID = uuid.UUID(int=0)


def seal_archive_month(month, using=None, after=None, max_batches=None):
    """Encrypt under ``month``'s data key every archived row of the month from the cursor
    ``after`` on (None: the whole month), at most ``max_batches`` batches (None: to the end);
    returns ``(rows rewritten, cursor reached, whether the end was reached)``. A row that cannot
    be decrypted (its key is no longer in KEYS) is left as it is and logged."""
    alias = using or get_settings().database
    store, partition = get_store(alias), month_partition(int(month[:4]), int(month[4:]))
    name, key = month_data_key(month, alias)
    rewritten = batches = 0
    while True:
        with store.atomic():
            rows = store.select_archive_month_payloads(partition.start_ms, partition.end_ms, after, BATCH_SIZE)
            changed = [sealed for sealed in (_sealed_row(row, name, key) for row in rows) if sealed]
            if changed:
                store.update_archive_payloads(changed)
        rewritten, batches = rewritten + len(changed), batches + 1
        if rows:
            after = (rows[-1][1], rows[-1][0])
        if len(rows) < BATCH_SIZE or (max_batches is not None and batches >= max_batches):
            return rewritten, after, len(rows) < BATCH_SIZE


def seal_recent_archive(using=None):
    """Seal the rows that entered the archive this month and last month since the last pass
    (each month's ``sealed_through_ms``, less ``CURSOR_MARGIN_MS`` for rows a slower sweep
    committed late), at most ``MAX_BATCHES_PER_PASS`` batches per month; returns the rows
    rewritten. Nothing when encryption is not configured."""
    if keyring() is None:
        return 0
    alias = using or get_settings().database
    year, month = month_of_ms(get_store(alias).archive_now_ms())
    previous = (year - 1, 12) if month == 1 else (year, month - 1)
    total = 0
    for key in (f"{y:04d}{m:02d}" for y, m in (previous, (year, month))):
        try:
            month_data_key(key, alias)
        except PayloadShredded:
            continue  # last month, shredded: nothing enters it any more
        through = ArchiveKey.objects.using(alias).filter(month=key).values_list("sealed_through_ms", flat=True)[0]
        start = (through - CURSOR_MARGIN_MS, NIL_UUID) if through else None
        rewritten, cursor, _ = seal_archive_month(key, alias, start, MAX_BATCHES_PER_PASS)
        if cursor is not None and cursor[0] > through:
            ArchiveKey.objects.using(alias).filter(month=key, sealed_through_ms__lt=cursor[0]).update(
                sealed_through_ms=cursor[0])
        total += rewritten
    return total


def shred_archive_month(month, *, by="code", override_hold=False, using=None):
    """Seal every row of the closed ``month`` ("YYYYMM") under its data key, then destroy the key;
    returns ``(rows sealed, ArchiveKey row)``. Raises ShredRefused (``reason``: "invalid_month",
    "open_month", "held", "not_configured") before anything is changed."""
    alias = using or get_settings().database
    if not isinstance(month, str) or not MONTH_RE.fullmatch(month):
        raise ShredRefused(f"{month!r} is not an archive month: expected YYYYMM.", reason="invalid_month")
    try:
        if keyring() is None:
            raise EncryptionUnavailable("HEADGATE['ENCRYPTION'] is not configured.")
    except EncryptionUnavailable as exc:
        raise ShredRefused(f"Cannot shred: {exc.message}", reason="not_configured") from None
    store = get_store(alias)
    now_month = "%04d%02d" % month_of_ms(store.archive_now_ms())
    if month >= now_month:
        raise ShredRefused(f"{month} is not closed yet (the store clock is in {now_month}): rows still "
                           "enter it. Shred a past month.", reason="open_month", month=month)
    partition = prepared_layout(alias).months_by_key.get(month)
    held = store.count_held_archive_rows(partition) if partition is not None else 0
    if held and not override_hold:
        raise ShredRefused(f"{held} rows of {month} are under a legal hold; nothing was shredded "
                           "(release the hold, or override it).", reason="held", held_rows=held, month=month)
    sealed, _, _ = seal_archive_month(month, alias)
    return sealed, shred_month_key(month, by, alias)


def rotate_keys(using=None):
    """Re-wrap every archive month data key under the ACTIVE key, then re-encrypt the hot rows
    under it (``hot_rotation.py``); returns ``(data keys re-wrapped, hot rows re-encrypted, hot
    rows left: running or claimed meanwhile)``."""
    count = rewrap_month_keys(using)
    rewritten, skipped = reencrypt_hot_rows(using)
    logger.info("Keys rotated: %s archive data keys re-wrapped, %s hot rows re-encrypted.", count, rewritten,
                extra={"action": "keys_rotated", "rows": rewritten, "skipped": skipped})
    return count, rewritten, skipped


def _sealed_row(row, name, key):
    """The row with its payloads under ``name``, or None when they already are (or it cannot
    be decrypted: logged)."""
    archive_id, evicted_at_ms, args, kwargs, result, errors = row
    values = (args, kwargs) if result is None else (args, kwargs, result)
    if all(_under(value, name) for value in values) and all(_entry_under(entry, name) for entry in errors or []):
        return None
    try:
        return (archive_id, evicted_at_ms, _seal_value(args, name, key), _seal_value(kwargs, name, key),
                None if result is None else _seal_value(result, name, key),
                [_seal_entry(entry, name, key) for entry in errors or []])
    except EncryptionUnavailable as exc:
        logger.error("Archived row %s of %s left as it is: %s", archive_id, name, exc.message,
                     extra={"action": "archive_seal_failed", "archive_id": str(archive_id)})
        return None


def _under(value, name):
    return is_envelope(value) and value.get("key") == name


def _entry_under(entry, name):
    if not isinstance(entry, dict):
        return True
    return all(not text or _text_under(text, name) for k, text in entry.items() if k in ("message", "traceback"))


def _text_under(text, name):
    if not isinstance(text, str) or not text.startswith("{"):
        return False
    try:
        return _under(json.loads(text), name)
    except ValueError:
        return False


def _seal_value(value, name, key):
    if _under(value, name):
        return value
    plain = json.dumps(open_value(value), separators=(",", ":"), ensure_ascii=False)
    return seal_bytes(plain.encode("utf-8"), name=name, key=key)


def _seal_entry(entry, name, key):
    if not isinstance(entry, dict):
        return entry
    sealed = dict(entry)
    for k in ("message", "traceback"):
        text = entry.get(k)
        if isinstance(text, str) and text and not _text_under(text, name):
            sealed[k] = json.dumps(seal_bytes(open_text(text).encode("utf-8"), name=name, key=key),
                                   separators=(",", ":"))
    return sealed


def after_sweep(sender, outcome=None, **kwargs):
    """``duty_finished`` receiver: after a retention sweep pass, seal the newly archived rows."""
    if getattr(sender, "name", None) == SWEEP_DUTY:
        try:
            seal_recent_archive()
        except HeadgateError as exc:  # the sweep's pass is done; the next pass tries again
            logger.error("Archived rows not sealed: %s", exc.message, extra={"action": "archive_seal_failed"})


def connect_archive_sealing():
    """Connect :func:`after_sweep` to ``duty_finished`` (called from ``apps.ready()``)."""
    duty_finished.connect(after_sweep, dispatch_uid="headgate.seal_archive")

