"""Retention classes, queue storage policies and archive policies (DESIGN §6, §7): validate, then write.

Every function validates its whole input before it writes anything and raises
``InvalidPolicy`` (with ``field`` naming the model field at fault, so admin forms can show the
message next to it) or ``UnknownRetentionClass``. The ``validate_*`` functions run the same
checks without writing. ``using`` picks a database alias (default ``HEADGATE["DATABASE"]``).

Retention classes are immutable once registered: registering a key again with the same
duration is a no-op, with another duration an error naming both. A queue storage policy maps a
queue to a derived class ``q_<queue>_<duration>`` (``q_emails_7d``), registered on the fly;
changing the mapping derives another class, and jobs already enqueued keep theirs.
"""

import logging
from datetime import timedelta

from django.db import connections, transaction

from .conf import get_settings
from .values.durations import describe_duration
from .exceptions import InvalidPolicy
from .models import ArchivePolicy, QueueStoragePolicy, RetentionClass
from .jobs.retention_classes import FOREVER_CLASS, STANDARD_CLASS, forget_queue_policies
from .values.policy_options import (
    check_class_key,
    check_cleanup_batch_limit,
    check_policy_duration,
    check_policy_queue,
    derived_class_key,
)

logger = logging.getLogger(__name__)

#: The classes every installation has (migration 0001 creates them; flush can remove them).
BUILTIN_CLASSES = {STANDARD_CLASS: timedelta(days=30), FOREVER_CLASS: None}


class _Keep:
    def __repr__(self):
        return "KEEP"


#: Default of optional policy fields: leave the stored value as it is (new rows get the default).
KEEP = _Keep()


def _alias(using):
    return using or get_settings().database


def _describe(duration):
    return "forever" if duration is None else describe_duration(duration.total_seconds())


# -- retention classes ---------------------------------------------------------------------------

def validate_retention_class(key, duration, *, using=None):
    """Check a new user class without writing: returns ``(key, duration)`` normalised.

    Raises InvalidPolicy for a bad key or duration, or when ``key`` is registered with another
    duration."""
    key = check_class_key(key)
    duration = check_policy_duration(duration, field="duration")
    _check_not_redefined(key, duration, _alias(using))
    return key, duration


def _check_not_redefined(key, duration, using):
    row = RetentionClass.objects.using(using).filter(key=key).values_list("duration").first()
    if row is not None and row[0] != duration:
        raise InvalidPolicy(
            f"Retention class {key!r} is registered with duration {_describe(row[0])}; it cannot "
            f"change to {_describe(duration)}. Durations are immutable: register a new key.",
            field="duration", key=key, registered=row[0], requested=duration,
        )


def _register(key, duration, using):
    """Create the class if it is new; a no-op when it exists with this duration."""
    with transaction.atomic(using=using):
        entry, created = RetentionClass.objects.using(using).get_or_create(key=key, defaults={"duration": duration})
    if not created and entry.duration != duration:
        _check_not_redefined(key, duration, using)
    if created:
        logger.info("Retention class %s registered.", key,
                    extra={"action": "retention_class_registered", "key": key})
    return entry


def register_retention_class(key, duration, *, using=None):
    """Register the user retention class ``key`` keeping terminal jobs for ``duration``.

    ``key``: lower-case ASCII letters, digits and ``_``, starting with a letter, at most 18
    characters; ``standard_30d``, ``forever`` and ``heartbeats`` are reserved and the ``q_``
    prefix belongs to derived classes. ``duration``: a timedelta (or seconds) of whole seconds,
    1 second to 36,500 days. Returns the RetentionClass; registering it again with the same
    duration changes nothing. Raises InvalidPolicy before anything is written."""
    using = _alias(using)
    key, duration = validate_retention_class(key, duration, using=using)
    return _register(key, duration, using)


def register_configured_classes(*, using=None, classes=None):
    """Register every class of HEADGATE["RETENTION_CLASSES"] (``{key: duration}``, or ``classes``
    when the caller passes the settings it was given); returns the keys.

    Called when a worker or a maintainer starts and after ``migrate``. Every entry is validated
    first; a redefined duration raises InvalidPolicy naming both durations."""
    using = _alias(using)
    classes = get_settings().retention_classes if classes is None else classes
    validated = [validate_retention_class(key, duration, using=using) for key, duration in classes.items()]
    for key, duration in validated:
        _register(key, duration, using)
    return [key for key, _ in validated]


def ensure_builtin_classes(*, using=None):
    """Create ``standard_30d`` and ``forever`` when missing (after a flush, for instance)."""
    using = _alias(using)
    for key, duration in BUILTIN_CLASSES.items():
        RetentionClass.objects.using(using).get_or_create(key=key, defaults={"duration": duration})


def register_after_migrate(sender, using=None, **kwargs):
    """``post_migrate`` receiver: built-in and configured classes exist after ``migrate``/``flush``.

    Does nothing on another alias than HEADGATE["DATABASE"] or when the Headgate tables are
    absent (migrated back to zero)."""
    if using != get_settings().database:
        return
    if RetentionClass._meta.db_table not in connections[using].introspection.table_names():
        return
    ensure_builtin_classes(using=using)
    register_configured_classes(using=using)


# -- queue storage policy ------------------------------------------------------------------------

def validate_queue_policy(queue, retention, cleanup_batch_limit=None, paused=False):
    """Check a queue storage policy without writing; returns ``(queue, retention, class key,
    cleanup_batch_limit, paused)``. ``retention`` None keeps the queue's jobs forever."""
    queue = check_policy_queue(queue)
    if retention is None:
        class_key = FOREVER_CLASS
    else:
        retention = check_policy_duration(retention, field="retention")
        class_key = derived_class_key(queue, retention)
    if cleanup_batch_limit is not KEEP:
        cleanup_batch_limit = check_cleanup_batch_limit(cleanup_batch_limit)
    if paused is not KEEP and not isinstance(paused, bool):
        raise InvalidPolicy(f"paused must be True or False (got {paused!r}).", field="paused")
    return queue, retention, class_key, cleanup_batch_limit, paused


def set_queue_retention(queue, retention, *, cleanup_batch_limit=KEEP, paused=KEEP, using=None):
    """Map ``queue`` to a retention for jobs enqueued from now on; returns the QueueStoragePolicy.

    ``retention``: a timedelta (or seconds), or None for forever. The queue's jobs get the derived
    class ``q_<queue>_<duration>`` (registered here when new), or ``forever``; jobs already
    enqueued keep their class. ``cleanup_batch_limit`` (1 to 10,000, or None) caps the rows of
    this queue one sweep transaction evicts; ``paused=True`` makes the sweep leave the queue's
    expired jobs in place (a cleanup hold; claiming is unaffected). Both keep their stored value
    unless given. Raises InvalidPolicy before anything is written."""
    using = _alias(using)
    queue, retention, class_key, cleanup_batch_limit, paused = validate_queue_policy(
        queue, retention, cleanup_batch_limit, paused)
    if retention is not None:
        _check_not_redefined(class_key, retention, using)
    with transaction.atomic(using=using):
        if retention is not None:
            _register(class_key, retention, using)
        policy = QueueStoragePolicy.objects.using(using).filter(queue=queue).first() or QueueStoragePolicy(queue=queue)
        policy.retention = retention
        policy.retention_class = class_key
        if cleanup_batch_limit is not KEEP:
            policy.cleanup_batch_limit = cleanup_batch_limit
        if paused is not KEEP:
            policy.paused = paused
        policy.save(using=using)
    forget_queue_policies()
    logger.info("Queue %s storage policy set: class %s.", queue, class_key,
                extra={"action": "queue_policy_set", "queue": queue, "key": class_key})
    return policy


def clear_queue_retention(queue, *, using=None):
    """Remove the queue's storage policy: its new jobs get ``standard_30d`` again (jobs already
    enqueued keep their class). Returns True when a policy was removed."""
    using = _alias(using)
    queue = check_policy_queue(queue)
    deleted, _ = QueueStoragePolicy.objects.using(using).filter(queue=queue).delete()
    forget_queue_policies()
    return bool(deleted)


# -- archive policy ------------------------------------------------------------------------------

def validate_archive_policy(queue, archive_retention):
    """Check an archive policy without writing; returns ``(queue, archive_retention)``."""
    return check_policy_queue(queue), check_policy_duration(archive_retention, field="archive_retention")


def set_archive_policy(queue, archive_retention, *, using=None):
    """Opt ``queue`` in to the cold archive: its jobs evicted from now on are copied into
    ``headgate_job_archive`` and kept at least ``archive_retention`` (a timedelta or seconds,
    whole seconds, 1 second to 36,500 days). Rows already archived keep the retention captured
    when they were evicted. Returns the ArchivePolicy; raises InvalidPolicy before writing."""
    using = _alias(using)
    queue, archive_retention = validate_archive_policy(queue, archive_retention)
    policy, _ = ArchivePolicy.objects.using(using).update_or_create(
        queue=queue, defaults={"archive_retention": archive_retention})
    logger.info("Queue %s archive policy set.", queue, extra={"action": "archive_policy_set", "queue": queue})
    return policy


def clear_archive_policy(queue, *, using=None):
    """Opt ``queue`` out of the archive: its jobs evicted from now on are deleted without a copy.
    Rows already archived stay until their month is pruned. Returns True when a policy was removed."""
    using = _alias(using)
    queue = check_policy_queue(queue)
    deleted, _ = ArchivePolicy.objects.using(using).filter(queue=queue).delete()
    return bool(deleted)
