"""Payload encryption at rest (DESIGN §18): AES-GCM through the ``cryptography`` package.

Opt-in per queue (``HEADGATE["ENCRYPTION"]["QUEUES"]``) or per task (``@headgate.task(encrypt=True)``),
decided once, at enqueue: a job whose arguments were stored encrypted has its result, progress,
output and error messages/tracebacks stored encrypted too (:func:`is_sealed_json`).

An encrypted value is an *envelope* naming its key, so a reader knows what to do and plaintext
rows stay readable as before: ``{"$headgate_enc": 1, "key": name, "nonce": b64, "ct": b64}``,
stored as the JSON of a JSON column (args, kwargs, result, progress) or as its JSON text in a
text (output lines, an error entry's message and traceback). ``ct`` is the AES-GCM ciphertext
and tag of the value's JSON text (texts: of the text itself), under a fresh 96-bit nonce. Empty
keyword arguments (``{}``) are stored as they are: there is nothing in them to hide.

Idempotency fingerprints of encrypted jobs are keyed BLAKE2b of the plaintext (the key derived
from the ACTIVE key), so equal payloads still match without the fingerprint revealing them.

The seams (one call where a payload is written or read): :func:`stored_payload` (enqueue),
:func:`seal_outcome` and
:func:`sealed_output` / :func:`sealed_json` (the worker's writes); reading is in
``decryption.py`` (:func:`opened_json` for the executor and the returned Job, ``open_job`` for
get_job and the Tasks backend, ``readable_job`` for the admin). Keys named ``archive:YYYYMM`` are archive month data keys
(``archive_keys.py``).
"""

import base64
import binascii
import hashlib
import os
import re
import threading
from dataclasses import dataclass, field

from ..conf import get_settings
from ..exceptions import EncryptionUnavailable, UnknownTask
from ..registry.tasks import get_task
from ..values.job_options import QUEUE_NAME_RE

try:  # the ``encryption`` extra
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
except ImportError:  # pragma: no cover - the system check and EncryptionUnavailable say so
    AESGCM = InvalidTag = None

MARKER = "$headgate_enc"
VERSION = 1
#: The stored keyword arguments of a job called without any, left as they are in an encrypted job.
NO_KWARGS = "{}"
NONCE_BYTES = 12
KEY_BYTES = 32
KEY_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
ARCHIVE_KEY_PREFIX = "archive:"
SETTING = "HEADGATE['ENCRYPTION']"
#: Bytes an envelope adds around a text at most (marker, key name, nonce, tag, base64 growth aside).
_ENVELOPE_OVERHEAD = 160


@dataclass(frozen=True)
class Keyring:
    """The configured keys: name -> 32 bytes, the ACTIVE name, the encrypted queues."""

    keys: dict
    active: str
    queues: frozenset
    fingerprint_key: bytes
    _ciphers: dict = field(default_factory=dict, compare=False)
    #: Keyed BLAKE2b-256 with the fingerprint key set; ``.copy()`` of it skips the keying per job.
    _fingerprint_hash: object = field(default=None, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_fingerprint_hash",
                           hashlib.blake2b(digest_size=32, key=self.fingerprint_key))

    def cipher(self, name):
        cipher = self._ciphers.get(name)
        if cipher is None:
            cipher = self._ciphers[name] = AESGCM(self.keys[name])
        return cipher

    def fingerprint_hash(self):
        """A fresh keyed BLAKE2b-256 for a fingerprint (its key derived from ACTIVE)."""
        return self._fingerprint_hash.copy()


def decode_key(value):
    """The 32 bytes of a urlsafe base64 key text, or None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        key = base64.urlsafe_b64decode(value.encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return None
    return key if len(key) == KEY_BYTES else None


def new_key_text():
    """A fresh key for ``KEYS``: urlsafe base64 of 32 random bytes."""
    return base64.urlsafe_b64encode(os.urandom(KEY_BYTES)).decode("ascii")


def encryption_errors(raw):
    """Every problem of a ``HEADGATE["ENCRYPTION"]`` value, as texts ({} or absent: encryption off)."""
    if not raw:
        return []
    if not isinstance(raw, dict):
        return [f"{SETTING} must be a dict of KEYS, ACTIVE and QUEUES."]
    errors = [f"{SETTING}[{key!r}] is not an encryption setting (KEYS, ACTIVE, QUEUES)."
              for key in raw if key not in ("KEYS", "ACTIVE", "QUEUES")]
    keys = raw.get("KEYS")
    if not isinstance(keys, dict) or not keys:
        errors.append(f"{SETTING}['KEYS'] must be a non-empty dict: name -> urlsafe base64 of 32 random bytes.")
        keys = {}
    for name, value in keys.items():
        if not isinstance(name, str) or not KEY_NAME_RE.fullmatch(name):
            errors.append(f"{SETTING}['KEYS']: key name {name!r} must be 1 to 64 letters, digits, '_', '.' or '-'.")
        elif decode_key(value) is None:
            errors.append(f"{SETTING}['KEYS'][{name!r}] must be urlsafe base64 of exactly 32 bytes "
                          "(make one with: python -c \"import base64, os; print(base64.urlsafe_b64encode("
                          "os.urandom(32)).decode())\").")
    active = raw.get("ACTIVE")
    if not isinstance(active, str) or active not in keys:
        errors.append(f"{SETTING}['ACTIVE'] must name one of KEYS (got {active!r}).")
    queues = raw.get("QUEUES", [])
    if isinstance(queues, str) or not isinstance(queues, (list, tuple, set, frozenset)) or not all(
            isinstance(queue, str) and QUEUE_NAME_RE.fullmatch(queue) for queue in queues):
        errors.append(f"{SETTING}['QUEUES'] must be a list of queue names.")
    if AESGCM is None:
        errors.append(f"{SETTING} is set but the cryptography package is not installed: "
                      "pip install 'django-headgate[encryption]'.")
    return errors


_cached = (None, None)  # (the settings' ENCRYPTION dict, its Keyring)


def keyring():
    """The Keyring of the settings, or None when encryption is not configured. Raises
    EncryptionUnavailable when it is configured wrongly or ``cryptography`` is missing."""
    global _cached
    raw = get_settings().encryption
    cached_raw, ring = _cached
    if cached_raw is raw:
        return ring
    if not raw:
        ring = None
    else:
        errors = encryption_errors(raw)
        if errors:
            raise EncryptionUnavailable(" ".join(errors))
        keys = {name: decode_key(value) for name, value in raw["KEYS"].items()}
        ring = Keyring(keys, raw["ACTIVE"], frozenset(raw.get("QUEUES", ())),
                       hashlib.blake2b(b"headgate fingerprint v1", key=keys[raw["ACTIVE"]]).digest())
    _cached = (raw, ring)
    return ring


def encrypts(task, queue):
    """True when a new job of ``task`` on ``queue`` is stored encrypted. A task registered with
    ``encrypt=True`` while encryption is not configured raises EncryptionUnavailable."""
    ring = keyring()
    try:
        wanted = get_task(task).encrypt
    except UnknownTask:
        wanted = False
    if ring is None:
        if wanted:
            raise EncryptionUnavailable(f"Task {task!r} is registered with encrypt=True but {SETTING} "
                                        "is not configured; nothing was written.")
        return False
    return wanted or queue in ring.queues


# -- writing ----------------------------------------------------------------------------------


class _NoncePool(threading.local):
    """Fresh random 96-bit nonces, cut from ``os.urandom`` bytes drawn 4 KB at a time: one
    system call per 341 nonces instead of one each (a call cost more than the AES-GCM
    encryption of a job's arguments, and a worker's job threads queued behind each other for
    the GIL it releases). The bytes are the same kernel randomness, each used once: every
    thread has a pool of its own, and a forked child drops the parent's (:func:`_new_nonces`),
    so no two threads or processes share a nonce."""

    SIZE = NONCE_BYTES * 341

    def __init__(self):
        self.bytes, self.at = b"", 0

    def take(self):
        at = self.at
        if at + NONCE_BYTES > len(self.bytes):
            self.bytes, at = os.urandom(self.SIZE), 0
        self.at = at + NONCE_BYTES
        return self.bytes[at:at + NONCE_BYTES]


def _new_nonces():
    global _nonces
    _nonces = _NoncePool()


_new_nonces()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_nonces)


def seal_bytes(data, name=None, key=None):
    """The envelope of ``data`` under key ``name`` (default: ACTIVE), or under the raw ``key``
    bytes given with its ``name`` (an archive month's data key)."""
    name, cipher = _cipher(name, key)
    nonce = _nonces.take()
    return {MARKER: VERSION, "key": name, "nonce": _b64(nonce), "ct": _b64(cipher.encrypt(nonce, data, None))}


def _cipher(name, key):
    """``(name, AESGCM)``: ``key``'s own cipher when raw key bytes are given, else the KEYS one
    of ``name`` (default: ACTIVE)."""
    if key is not None:
        return name, AESGCM(key)
    ring = keyring()
    if ring is None:
        raise EncryptionUnavailable(f"{SETTING} is not configured: nothing can be encrypted.")
    name = name or ring.active
    return name, ring.cipher(name)


_NONCE_CHARS = NONCE_BYTES * 4 // 3  # its base64, without padding


def _sealed(data, name, cipher):
    """The envelope's JSON text of ``data`` (what ``dump_envelope(seal_bytes(...))`` gives), built
    without the intermediate dict and with one base64 call: a nonce is 12 bytes, a multiple of
    3, so the base64 of nonce + ciphertext is the nonce's 16 characters then the ciphertext's."""
    nonce = _nonces.take()
    both = binascii.b2a_base64(nonce + cipher.encrypt(nonce, data, None), newline=False).decode("ascii")
    return f'{{"{MARKER}":{VERSION},"key":"{name}","nonce":"{both[:_NONCE_CHARS]}","ct":"{both[_NONCE_CHARS:]}"}}'


def sealed_json(value_json, name=None, key=None):
    """The stored JSON text of the envelope of a JSON text."""
    return _sealed(value_json.encode("utf-8"), *_cipher(name, key))


def sealed_text(text, name=None, key=None):
    """An envelope's JSON text standing for ``text`` in a text field."""
    return _sealed(text.encode("utf-8"), *_cipher(name, key))


def stored_payload(task, queue, args_json, kwargs_json, plain_fingerprint):
    """``(args JSON, kwargs JSON, fingerprint)`` to store for a new job: the plaintext and
    ``plain_fingerprint(task, args, kwargs)`` unless the job is encrypted (:func:`encrypts`),
    else the envelopes and the keyed fingerprint of the plaintext. The arguments are always
    sealed (they mark the job as encrypted: :func:`is_sealed_json`); keyword arguments only when
    there are some: ``{}`` holds nothing to hide, and sealing it cost an encryption at enqueue
    and a decryption per attempt."""
    if not encrypts(task, queue):
        return args_json, kwargs_json, plain_fingerprint(task, args_json, kwargs_json)
    ring = keyring()
    cipher = ring.cipher(ring.active)
    return (_sealed(args_json.encode("utf-8"), ring.active, cipher),
            kwargs_json if kwargs_json == NO_KWARGS else _sealed(kwargs_json.encode("utf-8"), ring.active, cipher),
            keyed_fingerprint(task, args_json, kwargs_json, ring))


def keyed_fingerprint(task, args_json, kwargs_json, ring=None):
    """The fingerprint of an encrypted job: keyed BLAKE2b-256 of its plaintext (key derived from
    the ACTIVE key), the length and alphabet of the plain SHA-256 one."""
    digest = (ring or keyring()).fingerprint_hash()
    digest.update(f"{task}\n{args_json}\n{kwargs_json}".encode())
    return digest.hexdigest()


def seal_outcome(outcome):
    """Encrypt an executor Outcome's result JSON and error message/traceback in place."""
    if outcome.result_json is not None:
        outcome.result_json = sealed_json(outcome.result_json)
    if outcome.error:
        outcome.error = sealed_error(outcome.error)
    return outcome


def sealed_error(entry):
    """An ``errors`` entry with its message and traceback encrypted (other keys as they are)."""
    return {k: sealed_text(v) if k in ("message", "traceback") and isinstance(v, str) and v else v
            for k, v in entry.items()}


def sealed_output(text, max_chars):
    """The line appended to an encrypted job's output for ``text``: the envelope of its tail,
    short enough that the stored output (kept to ``max_chars``) holds it whole."""
    keep = max(0, (max_chars - _ENVELOPE_OVERHEAD) * 3 // 4)
    while True:
        line = sealed_text(text[-keep:] if keep else "") + "\n"
        if len(line) <= max_chars or keep == 0:
            return line
        keep //= 2


def _b64(data):
    return base64.b64encode(data).decode("ascii")


def dump_envelope(envelope):
    """The envelope's JSON text. Built by hand (the encoder's set-up cost more than the rest): key
    names are ``KEY_NAME_RE`` or ``archive:YYYYMM``, nonce and ciphertext base64, none needs
    escaping."""
    return (f'{{"{MARKER}":{envelope[MARKER]},"key":"{envelope["key"]}","nonce":"{envelope["nonce"]}",'
            f'"ct":"{envelope["ct"]}"}}')


def is_envelope(value):
    return isinstance(value, dict) and MARKER in value


def is_sealed_json(args_json):
    """True when a job's stored args JSON is an envelope: the job is encrypted. Plain args are
    always a JSON array, an envelope an object: no need to decode it."""
    if isinstance(args_json, str):
        return args_json.lstrip()[:1] == "{" and MARKER in args_json
    return is_envelope(args_json)
