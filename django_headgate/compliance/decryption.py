"""Reading encrypted payloads (DESIGN §18): the envelopes ``encryption.py`` writes, decrypted.

Plaintext values pass through unchanged, so rows written before encryption was enabled (or of
queues it does not cover) read as before. ``open_*`` raise EncryptionUnavailable (key not in
KEYS, ciphertext altered) or PayloadShredded (an archive month's data key was destroyed);
``readable*`` are for displays and show why instead of raising.
"""

import base64
import binascii
import json
import re

from ..exceptions import EncryptionUnavailable, PayloadShredded
from ..values.payload import load_json
from .encryption import ARCHIVE_KEY_PREFIX, MARKER, SETTING, InvalidTag, is_envelope, keyring

# An envelope's JSON text exactly as encryption.py writes it (key, nonce, ciphertext): a worker
# reads its parts off the text instead of running the JSON decoder over it. Any other spelling
# of an envelope (re-serialised by the database, older rows) goes through the decoder.
_WRITTEN_ENVELOPE = re.compile(
    r'\{"' + re.escape(MARKER) + r'":\d+,"key":"([^"\\]+)","nonce":"([A-Za-z0-9+/]{16})","ct":"([A-Za-z0-9+/=]+)"\}')


def open_envelope(envelope):
    """The plaintext bytes of an envelope. Raises EncryptionUnavailable (key unknown, or the
    ciphertext does not authenticate) and PayloadShredded (its archive month key is destroyed)."""
    return _opened(envelope.get("key"), envelope.get("nonce"), envelope.get("ct"))


def _opened(name, nonce_text, ct_text):
    try:
        nonce, ct = _nonce_and_ciphertext(nonce_text, ct_text)
    except (TypeError, binascii.Error, ValueError):
        raise EncryptionUnavailable("A stored envelope is damaged.") from None
    if isinstance(name, str) and name.startswith(ARCHIVE_KEY_PREFIX):
        from .archive_keys import month_cipher  # noqa: PLC0415 - same package, a lazy lookup
        cipher = month_cipher(name)
    else:
        ring = keyring()
        if ring is None or name not in ring.keys:
            raise EncryptionUnavailable(f"A payload is encrypted under key {name!r}, which "
                                        f"{SETTING}['KEYS'] does not hold.")
        cipher = ring.cipher(name)
    try:
        return cipher.decrypt(nonce, ct, None)
    except InvalidTag:
        raise EncryptionUnavailable(f"A payload under key {name!r} does not decrypt: wrong key "
                                    "or altered ciphertext.") from None


def _nonce_and_ciphertext(nonce_text, ct_text):
    """The bytes of an envelope's base64 nonce and ciphertext. The 16 characters of a 12-byte
    nonce carry no padding, so one decoding of both texts joined serves (half the calls)."""
    if isinstance(nonce_text, str) and len(nonce_text) == 16 and "=" not in nonce_text and isinstance(ct_text, str):
        both = binascii.a2b_base64(nonce_text + ct_text)
        return both[:12], both[12:]
    return base64.b64decode(nonce_text), base64.b64decode(ct_text)


def open_value(value):
    """A JSON column's value with an envelope replaced by the decrypted value."""
    return load_json(open_envelope(value).decode("utf-8")) if is_envelope(value) else value


def opened_arguments(args_json, kwargs_json, sealed):
    """``(args, kwargs)`` of a claimed job's stored JSON, decoded once each. Only a sealed job
    (its stored arguments are an envelope: encryption.is_sealed_json) has envelopes to decrypt;
    a plain job's JSON is its arguments, with nothing to look for."""
    if sealed:
        return _opened_stored(args_json), _opened_stored(kwargs_json)
    return decoded_json(args_json), decoded_json(kwargs_json)


def _opened_stored(value):
    """:func:`opened_json` of a stored value, an envelope's text in its written form read
    without the JSON decoder."""
    written = _WRITTEN_ENVELOPE.fullmatch(value) if isinstance(value, str) else None
    if written is None:
        return opened_json(value)
    return load_json(_opened(*written.groups()).decode("utf-8"))


def decoded_json(text):
    """A stored JSON text decoded (a value read already decoded is returned as it is)."""
    return load_json(text) if isinstance(text, str) else text


def opened_json(text):
    """A stored JSON text (or value) decoded, decrypted when it is an envelope."""
    return open_value(load_json(text) if isinstance(text, str) else text)


def open_text(text):
    """A text field's value, decrypted when it is an envelope's JSON text."""
    if isinstance(text, str) and text.startswith("{") and MARKER in text:
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if is_envelope(value):
            return open_envelope(value).decode("utf-8")
    return text


def open_output(output):
    """An output of envelope lines decrypted and joined; a line cut by the tail limit is dropped."""
    if not isinstance(output, str) or MARKER not in output:
        return output
    parts = []
    for line in output.split("\n"):
        opened = open_text(line)
        if opened is line and MARKER in line:
            continue  # the head of an envelope the tail limit cut
        parts.append(opened)
    return "".join(parts)


def open_errors(errors):
    return [{k: open_text(v) if k in ("message", "traceback") else v for k, v in entry.items()}
            if isinstance(entry, dict) else entry for entry in errors or []]


_OPENERS = {"args": open_value, "kwargs": open_value, "result": open_value, "progress": open_value,
            "output": open_output, "errors": open_errors}
#: What a display shows for a payload under a shredded archive month key.
SHREDDED = "shredded (its archive month's data key was destroyed)"


def open_job(job):
    """Decrypt, in place, the loaded payload fields of a Job or ArchivedJob instance; returns it
    (None stays None). Raises EncryptionUnavailable or PayloadShredded."""
    if job is not None:
        for name in _loaded_payload_fields(job):
            setattr(job, name, _OPENERS[name](getattr(job, name)))
    return job


def readable_job(job):
    """:func:`open_job` for a display (the admin): a field that cannot be decrypted shows
    :data:`SHREDDED` or why, instead of raising."""
    if job is not None:
        for name in _loaded_payload_fields(job):
            setattr(job, name, readable(name, getattr(job, name)))
    return job


def readable(name, value):
    """Field ``name``'s stored ``value`` decrypted, or the text saying why it cannot be."""
    if name == "errors":
        return [{k: readable("message", v) if k in ("message", "traceback") else v for k, v in entry.items()}
                if isinstance(entry, dict) else entry for entry in value or []]
    try:
        return (open_text if name in ("message", "traceback") else _OPENERS[name])(value)
    except PayloadShredded:
        return SHREDDED
    except EncryptionUnavailable as exc:
        return f"cannot be decrypted: {exc}"


def _loaded_payload_fields(job):
    deferred = job.get_deferred_fields()
    return [name for name in _OPENERS if name not in deferred and hasattr(job, name)]
