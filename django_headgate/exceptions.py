"""Every public error of django-headgate.

One base class, :class:`HeadgateError`; a subclass's docstring is its default message and
details travel as attributes (a ``reason`` code, a ``field`` name), never only in the text.
"""


class HeadgateError(Exception):
    """A django-headgate error."""

    def __init__(self, message=None, **details):
        self.message = message or (self.__doc__ or "").strip()
        for key, value in details.items():
            setattr(self, key, value)
        super().__init__(self.message)


class InvalidJob(HeadgateError):
    """The job is invalid and was not enqueued."""


class UnknownTask(InvalidJob):
    """The task path does not name a task this process can run."""


class UnregisteredTask(UnknownTask):
    """The task is not registered (@headgate.task, HEADGATE['TASK_MODULES'] or a Django @task); only registered tasks run."""


class InvalidTaskDefinition(HeadgateError):
    """The task cannot be registered: it must be a module-level function with valid options."""


class InvalidTaskOption(InvalidTaskDefinition):
    """An option of @headgate.task is invalid (``option`` names it); the task was not registered."""


class InvalidArguments(InvalidJob):
    """The job arguments are not JSON-serialisable."""


class InvalidText(InvalidArguments):
    """Text must be valid Unicode without NUL characters or lone surrogates."""


class PayloadTooLarge(InvalidArguments):
    """The job's encoded arguments exceed HEADGATE['MAX_PAYLOAD_BYTES']."""


class PayloadTooDeep(InvalidArguments):
    """The job's JSON is nested too deeply."""


class InvalidTags(InvalidJob):
    """Tags must be a list or tuple of strings of 1 to 100 characters."""


class InvalidUniqueKey(InvalidJob):
    """unique_key must be a string of 1 to 255 characters."""


class InvalidQueueName(InvalidJob):
    """Queue names are 1 to 64 characters from [A-Za-z0-9_.-]."""


class InvalidPriority(InvalidJob):
    """Priority must be an integer from -100 to 100."""


class InvalidRunAt(InvalidJob):
    """run_at must be a timezone-aware datetime (when USE_TZ is on) within the supported range; delay a finite, bounded duration."""


class InvalidTimeout(InvalidJob):
    """timeout must be a finite number of seconds from 0.1 to 604,800 (7 days)."""


class JobIdConflict(InvalidJob):
    """A job with this id already exists."""


class InvalidDependency(InvalidJob):
    """``depends_on`` or ``on_parent_failure`` is not valid (docs/workflows.md)."""


class DependencyNotFound(InvalidDependency):
    """A job named in ``depends_on`` has no hot row (it never existed, or was evicted)."""


class IdempotencyConflict(HeadgateError):
    """A hot job already holds this unique_key with other arguments."""


class UnknownRetentionClass(HeadgateError):
    """The retention class is not registered."""


class InvalidPolicy(HeadgateError):
    """The policy is invalid and was not saved."""


class StaleLease(HeadgateError):
    """The fenced write was rejected: the lease moved on (the job was rescued or re-claimed)."""


class LeaseLost(StaleLease):
    """``current_job().atomic()``: the job's fence moved before the block committed; the block's
    writes were rolled back (docs/workflows.md)."""


# Never raised in the task: it names the errors entry of an attempt that reached its time limit
# (the worker writes it at the deadline while the task's thread may still run).
class JobTimeout(HeadgateError):
    """The attempt ran past its time limit (timeout); it failed and the job's late result is refused."""


# Never raised: it names the ``LeaseExpired`` entries the rescue duty writes to ``errors``
# (the Django Tasks backend reports them as this exception class).
class LeaseExpired(HeadgateError):
    """The job's lease expired before its worker acknowledged it; the rescue duty released it."""


class JobNotFound(HeadgateError):
    """No hot job has this id."""


class InvalidJobState(HeadgateError):
    """The job is not in a state that allows this operation."""


class UnknownSchedule(HeadgateError):
    """No periodic schedule has this name (HEADGATE['PERIODIC'] or @headgate.task(cron=...))."""


class JobWaitTimeout(HeadgateError):
    """The job did not end within the time wait() was given (``job_id``, ``timeout`` say which)."""


class WaitInsideTransaction(HeadgateError):
    """wait() cannot run inside a transaction on the Headgate database: it would not see the job end."""


class InvalidJobFilter(HeadgateError):
    """The job filter is invalid: give ids, queue, task, state, tag or older_than with valid values."""


class ArchivePruneRefused(HeadgateError):
    """The archive month was not pruned."""


class InvalidArchiveMonth(ArchivePruneRefused):
    """Archive months are exactly six ASCII digits YYYYMM naming a prepared month (202501 to 203112,
    or a later month headgate_archive_horizon prepared)."""


class ArchiveHorizonRefused(HeadgateError):
    """The archive horizon was not changed."""


class UnsupportedOnVendor(HeadgateError):
    """This feature is not supported on this database vendor."""


class UnsupportedUnderTransactionPooling(HeadgateError):
    """This operation needs a server session of its own, which transaction pooling does not give."""


class WorkerStartFailed(HeadgateError):
    """The worker could not reach its database within HEADGATE['WORKER']['STARTUP_TIMEOUT']."""


class InvalidSnooze(HeadgateError):
    """Snooze takes a finite number of seconds (or a timedelta) from 0 to 7 days."""


# Not raised to the task: the worker records it in ``errors`` when a job snoozes once more than
# HEADGATE['MAX_SNOOZES'] allows (that snooze is then a failed attempt).
class SnoozeLimitExceeded(HeadgateError):
    """The job has snoozed HEADGATE['MAX_SNOOZES'] times; this snooze counts as a failed attempt."""


# Never raised: it names the errors entry of a job whose result the database refused to store.
class ResultNotStored(HeadgateError):
    """The task's result could not be stored; the job failed instead."""


# The worker records it in ``errors`` for a result (the attempt fails and is not retried: the
# task would return the same); ``current_job().set_progress`` raises it for a progress value.
class ResultTooLarge(HeadgateError):
    """The job's result (or progress) encodes to more than HEADGATE['MAX_RESULT_BYTES']; it was not stored."""


class InvalidHold(HeadgateError):
    """The legal hold is invalid and was not placed: name a tag or a list of job ids (not both)
    and give a reason."""


class HoldNotFound(HeadgateError):
    """No legal hold has this id."""


class InvalidErasure(HeadgateError):
    """The erasure is invalid and nothing was erased: name a tag and give a reason."""


class ErasureRefused(HeadgateError):
    """The erasure stopped: rows carrying the tag are under a legal hold (erase them with
    override_hold=True only when the hold allows it)."""


class InvalidConcurrency(InvalidJob):
    """Invalid concurrency key or limit for this job."""


class InvalidQueueControl(HeadgateError):
    """Invalid queue control (pause, concurrency or rate limit); nothing was changed."""


class EncryptionUnavailable(HeadgateError):
    """Payload encryption is needed but cannot be done: HEADGATE["ENCRYPTION"] is missing or
    invalid, names an unknown key, or the ``cryptography`` package is not installed
    (``pip install django-headgate[encryption]``). Nothing was written."""


class PayloadShredded(HeadgateError):
    """The payload was encrypted under an archive month's data key that has been shredded: it
    can no longer be read by anyone."""


class ShredRefused(HeadgateError):
    """The archive month was not shredded (``reason``: invalid_month, open_month, held,
    not_configured); nothing was changed."""
