"""Which retention class a new job gets, and the registry of known classes.

Precedence at enqueue (DESIGN §6): explicit ``retention_class=`` / ``retain_forever=True`` >
the queue's storage policy > ``standard_30d``. Classes are immutable once registered and never
deleted, so a key seen once on a database stays valid there: known keys are cached per process
and per database alias (each alias has its own ``headgate_retention_class`` table, and no foreign
key catches a job whose class is missing on its database: it would never expire).
"""

import time

from ..exceptions import UnknownRetentionClass
from ..models import QueueStoragePolicy, RetentionClass

STANDARD_CLASS = "standard_30d"
FOREVER_CLASS = "forever"

# A queue policy change reaches other processes within this many seconds; this process sees
# its own changes at once (policy writes call forget_queue_policies()).
QUEUE_POLICY_CACHE_SECONDS = 5.0

_known_keys = {}  # alias -> {class key known to exist on that database}
_queue_classes = {}  # alias -> (loaded at monotonic time, {queue: class key})


def class_exists(key, using):
    """True when the retention class ``key`` is registered on the database ``using``."""
    known = _known_keys.setdefault(using, set())
    if key in known:
        return True
    if RetentionClass.objects.using(using).filter(key=key).exists():
        known.add(key)
        return True
    return False


def resolve_retention_class(queue, retention_class, retain_forever, using):
    """The class key fixed on a new job; raises UnknownRetentionClass before anything is written."""
    if retain_forever:
        if retention_class not in (None, FOREVER_CLASS):
            raise UnknownRetentionClass(
                f"retain_forever=True conflicts with retention_class={retention_class!r}."
            )
        return FOREVER_CLASS
    if retention_class is None:
        return queue_policy_classes(using).get(queue, STANDARD_CLASS)
    if not isinstance(retention_class, str) or not class_exists(retention_class, using):
        raise UnknownRetentionClass(
            f"Unknown retention class {retention_class!r}: register it with "
            "register_retention_class() or HEADGATE['RETENTION_CLASSES'].",
            key=retention_class,
        )
    return retention_class


def queue_policy_classes(using):
    """{queue: retention class} of every queue storage policy, cached for a few seconds."""
    loaded = _queue_classes.get(using)
    if loaded is None or time.monotonic() - loaded[0] > QUEUE_POLICY_CACHE_SECONDS:
        mapping = dict(QueueStoragePolicy.objects.using(using).values_list("queue", "retention_class"))
        loaded = _queue_classes[using] = (time.monotonic(), mapping)
    return loaded[1]


def forget_queue_policies():
    """Reload queue policies on the next enqueue (called after a policy write)."""
    _queue_classes.clear()


def forget_known_classes():
    """Drop the per-process caches (tests that flush the database call this)."""
    _known_keys.clear()
    _queue_classes.clear()
