"""``current_job()``: what a running task knows about itself, and its fenced writes."""

import threading
from dataclasses import dataclass
from functools import cached_property

from ..compliance.encryption import sealed_json, sealed_output
from ..conf import MAX_RESULT_BYTES_DEFAULT
from ..exceptions import ResultTooLarge
from ..values.payload import dump_json
from ..workflows.fenced import fenced_completion
from .storable import storable_json, storable_text, storable_value

_local = threading.local()


@dataclass(frozen=True)
class JobContext:
    """The job running in this thread. Its writes carry ``(job_id, fence)``: when the lease has
    moved on (rescued, re-claimed, cancelled) they raise ``StaleLease`` and change nothing."""

    job_id: object
    queue: str
    task: str
    attempt: int
    max_attempts: int
    fence: int
    worker_id: str
    _store: object
    _output_max_chars: int
    _stopping: object = frozenset()  # the worker's JobControl.stopping: (job_id, fence) pairs
    _max_result_bytes: int = MAX_RESULT_BYTES_DEFAULT
    _sealed: bool = False  # an encrypted job: progress and output are stored encrypted

    @cached_property
    def meta(self):
        """The job's ``meta`` (``enqueue(meta=...)``) as a dict, {} when it has none; read from
        the row once, on first use."""
        return self._store.read_job_meta(self.job_id)

    @property
    def abort_requested(self):
        """True once this attempt should stop: ``cancel()`` asked for it (the worker sees that
        within about a second), or its time limit passed. A set lookup, no query: check it as
        often as you like and return (or raise) when it turns True."""
        return (self.job_id, self.fence) in self._stopping

    def set_progress(self, progress):
        """Replace the job's progress with any JSON-serialisable value (made storable: NUL and
        surrogates become U+FFFD). Raises ResultTooLarge, and changes nothing, when it encodes to
        more than HEADGATE["MAX_RESULT_BYTES"]."""
        progress_json = dump_json(storable_value(progress), "progress")
        if len(progress_json) > self._max_result_bytes:
            raise result_too_large("progress", len(progress_json), self._max_result_bytes)
        if self._sealed:
            progress_json = sealed_json(progress_json)
        self._store.set_progress(self.job_id, self.fence, progress_json)

    def atomic(self):
        """``with current_job().atomic() as block:``: the task's writes on the job's database and
        the job's fenced success commit in one transaction; ``LeaseLost`` (and a rollback) when
        the lease moved on. ``block.result`` is stored as the job's result (docs/workflows.md)."""
        return fenced_completion(self._store, self.job_id, self.fence, self._dump_result)

    def _dump_result(self, value):
        result_json = json_result(value)
        if len(result_json) > self._max_result_bytes:
            raise result_too_large("result", len(result_json), self._max_result_bytes)
        return result_json

    def parent_results(self):
        """``{parent job id: result}`` of the jobs this one was enqueued to wait for
        (``depends_on``, docs/workflows.md); a parent already evicted is absent. One query."""
        return self._store.parent_results(self.job_id)

    def append_output(self, text):
        """Append text to the job's output (the last OUTPUT_MAX_CHARS characters are kept; NUL and
        surrogates become U+FFFD). Only that tail of ``text`` is sent to the database."""
        text = str(text)
        if self._sealed:
            text = sealed_output(storable_text(text), self._output_max_chars)
        elif len(text) > self._output_max_chars:
            text = text[-self._output_max_chars:]
        self._store.append_output(self.job_id, self.fence, storable_text(text), self._output_max_chars)


def current_job():
    """The JobContext of the job running in this thread, or None outside a job."""
    return getattr(_local, "job", None)


def _set_current_job(context):
    _local.job = context


def json_result(value):
    """Serialise a task's return value, made storable; raises TypeError/ValueError when it is
    not JSON. The text is ASCII (non-ASCII characters are escaped): its length is its size in
    bytes, which the worker compares with HEADGATE["MAX_RESULT_BYTES"]."""
    return storable_json(value)


def result_too_large(what, size, limit):
    """The ResultTooLarge of a ``what`` ("result" or "progress") of ``size`` bytes of JSON."""
    return ResultTooLarge(
        f"The task's {what} encodes to {size:,} bytes of JSON; HEADGATE['MAX_RESULT_BYTES'] allows "
        f"{limit:,}.",
        field=what, size=size, limit=limit)
