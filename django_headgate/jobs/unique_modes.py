"""How long a job's ``unique_key`` is held (DESIGN §12): ``unique_until="evicted"`` or ``"finished"``.

``"evicted"`` (the default) is the archive design's logical-eviction contract: the key is held
until the retention sweep removes the row, so a replay after the job finished still returns it.

``"finished"`` holds the key only while the job is not terminal. The store's terminal transitions
(complete, fail, cancel, rescue) are not changed: the key is released *lazily*, by the next
enqueue that meets it. That enqueue, in one transaction,

1. inserts (``ON CONFLICT DO NOTHING`` / duplicate key: nothing written when the key is held);
2. reads the holder;
3. when the holder is terminal and was enqueued with ``"finished"``, clears its key with a
   conditional ``UPDATE`` (still that key, still terminal) and inserts again; otherwise the
   fingerprint rule of ``enqueue`` applies (same task and arguments: the holder is returned, else
   ``IdempotencyConflict``). When the conditional ``UPDATE`` matched nothing, a concurrent
   enqueue released the key first: the next read of the holder is a locking read
   (``SELECT ... FOR UPDATE``), a current read even under MariaDB's REPEATABLE READ, so it sees
   that enqueue's new row once it commits. (Locking only then, not on every conflict, narrows
   InnoDB's deadlocks: see ``enqueue_until_finished``.)

A new row records its mode in ``headgate_job.unique_until`` (migration 0007) by an ``UPDATE`` of
its own primary key in the same transaction (``store.mark_unique_until_finished``), so the insert
statements are unchanged; the release is ``store.release_unique_key``. Both modes answer a held
key by one rule, :func:`holder_or_conflict`. Two
concurrent enqueues of one key: the second waits on the first's row lock, then sees its new row
and returns it (same arguments). The released holder keeps its row, with ``unique_key`` NULL.
"""

from django.db import OperationalError, transaction

from ..exceptions import IdempotencyConflict, InvalidJob
from ..models import TERMINAL_STATES, Job
from ..signals import send_job_enqueued_on_commit

EVICTED = "evicted"
FINISHED = "finished"
MODES = (EVICTED, FINISHED)
#: Insert attempts before a key that keeps changing hands is reported as contended.
ATTEMPTS = 3
#: Whole-transaction retries after a deadlock, when the enqueue owns its transaction.
DEADLOCK_RETRIES = 3


def check_unique_until(unique_until, unique_key):
    """The mode to store (None for "evicted"); raises InvalidJob for a bad value."""
    if unique_until not in MODES:
        raise InvalidJob(f"unique_until must be one of {', '.join(map(repr, MODES))} (got {unique_until!r}).")
    if unique_until == FINISHED and unique_key is None:
        raise InvalidJob('unique_until="finished" needs a unique_key.')
    return FINISHED if unique_until == FINISHED else None


def holder_or_conflict(holder, new_job):
    """The idempotent-replay rule, for both modes: a key held by ``holder`` returns it when the
    fingerprints (task + arguments) match, else raises IdempotencyConflict."""
    if holder.fingerprint != new_job.fingerprint:
        raise IdempotencyConflict(
            f"unique_key {new_job.unique_key!r} is held by job {holder.id} with other task arguments.",
            unique_key=new_job.unique_key, job_id=holder.id,
        )
    return holder


def key_contended(new_job):
    """The IdempotencyConflict of a key that changed hands ``ATTEMPTS`` times during one enqueue."""
    return IdempotencyConflict(f"unique_key {new_job.unique_key!r} is contended; try again.",
                               unique_key=new_job.unique_key)


def is_released(holder):
    """True when ``holder`` no longer holds its key: terminal and enqueued until "finished"."""
    return holder.state in TERMINAL_STATES and holder.unique_until == FINISHED


def enqueue_until_finished(store, new_job, job_instance):
    """Insert ``new_job`` holding its key until it is terminal; returns the Job (new or holder).

    ``job_instance(new_job, created_at, run_at, using)`` builds the Job of a row just inserted.
    Raises IdempotencyConflict for a holder with other arguments, or a key that changed hands
    ``ATTEMPTS`` times."""
    # InnoDB can deadlock several enqueues of one released key (each holds the shared lock its
    # duplicate-key error left on the old holder's index entry, and the release needs it
    # exclusively). It rolls one transaction back: retried here when the enqueue is its own
    # transaction (autocommit); inside the caller's transaction the error is the caller's.
    retries = 0 if store.connection.in_atomic_block else DEADLOCK_RETRIES
    for retry in range(retries + 1):
        try:
            return _enqueue_once(store, new_job, job_instance)
        except OperationalError as exc:
            if retry == retries or not store.is_deadlock(exc):
                raise


def _enqueue_once(store, new_job, job_instance):
    using = store.alias
    jobs = Job.objects.using(using)
    lock_holder = False
    with transaction.atomic(using=using):
        for _ in range(ATTEMPTS):
            inserted = store.insert_job(new_job)
            if inserted is not None:
                store.mark_unique_until_finished(new_job.id)
                job = job_instance(new_job, *inserted, using)
                job.unique_until = FINISHED
                send_job_enqueued_on_commit([job], using)
                return job
            holders = jobs.select_for_update() if lock_holder else jobs
            holder = holders.filter(unique_key=new_job.unique_key).first()
            if holder is None:
                continue  # released or evicted since our insert: try again
            if not is_released(holder):
                return holder_or_conflict(holder, new_job)
            released = store.release_unique_key(holder.pk, new_job.unique_key)
            # 0: another enqueue released it first. Our snapshot may predate its new row
            # (REPEATABLE READ): read the next holder with a locking (current) read.
            lock_holder = not released
    raise key_contended(new_job)
