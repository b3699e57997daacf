"""Queue controls (DESIGN §15): pause, resume and limits of a queue, stored in
``headgate_queue_control`` and read by every worker within about a second
(``flow/claim_plan.py``). Each function validates its whole input before it writes
(``InvalidQueueControl``); ``using`` picks the database alias (default ``HEADGATE["DATABASE"]``).
"""

from django.db import transaction

from ..conf import get_settings
from ..exceptions import InvalidJob, InvalidQueueControl
from ..models import QueueControl
from ..values.concurrency import parse_rate_limit
from ..values.job_options import check_queue_name


def check_queue_control_name(name):
    try:
        return check_queue_name(name)
    except InvalidJob as exc:
        raise InvalidQueueControl(str(exc), field="queue") from None


def _alias(using):
    return using or get_settings().database


def _update(name, using, **values):
    """Write ``values`` on the queue's control row (created when missing); returns the row."""
    using = _alias(using)
    with transaction.atomic(using=using):
        control, _ = QueueControl.objects.using(using).select_for_update().get_or_create(queue=name)
        for field, value in values.items():
            setattr(control, field, value)
        control.save(using=using)
    return control


def pause_queue(name, *, using=None):
    """Workers stop claiming from queue ``name`` within about a second (running jobs finish;
    enqueue goes on). Returns the QueueControl."""
    return _update(check_queue_control_name(name), using, paused=True)


def resume_queue(name, *, using=None):
    """Workers claim from queue ``name`` again within about a second. Returns the QueueControl."""
    return _update(check_queue_control_name(name), using, paused=False)


def check_queue_limits(concurrency, rate_limit):
    """``(concurrency, rate_limit)`` checked: an int >= 1 or None, "R/s|m|h" or None."""
    if concurrency is not None and (isinstance(concurrency, bool) or not isinstance(concurrency, int)
                                    or concurrency < 1):
        raise InvalidQueueControl(f"concurrency must be an integer of at least 1, or None (got {concurrency!r}).",
                                  field="concurrency")
    if rate_limit is not None:
        parse_rate_limit(rate_limit, InvalidQueueControl)
    return concurrency, rate_limit


def set_queue_limits(name, concurrency=None, rate_limit=None, *, using=None):
    """Cap queue ``name`` at ``concurrency`` leased jobs across all workers and ``rate_limit``
    ("R/s", "R/m", "R/h": jobs started per window across all workers); None clears a limit.
    Returns the QueueControl."""
    name = check_queue_control_name(name)
    concurrency, rate_limit = check_queue_limits(concurrency, rate_limit)
    return _update(name, using, concurrency=concurrency, rate_limit=rate_limit, window_started_at=None,
                   window_count=0)


def queue_controls(*, using=None):
    """``{queue: QueueControl}`` of the queues with a control in force (paused or limited)."""
    rows = QueueControl.objects.using(_alias(using)).exclude(
        paused=False, concurrency__isnull=True, rate_limit__isnull=True)
    return {row.queue: row for row in rows}
