"""``current_job()``: what a running task knows about itself, and its fenced writes."""

import threading
from dataclasses import dataclass

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

    @property
    def abort_requested(self):
        """True once this attempt should stop: ``cancel()`` asked for it (the worker sees that
        within about a second), or its time limit passed. A set lookup, no query: check it as
        often as you like and return (or raise) when it turns True."""
        return (self.job_id, self.fence) in self._stopping

    def set_progress(self, progress):
        """Replace the job's progress with any JSON-serialisable value (made storable: NUL and
        surrogates become U+FFFD)."""
        from ..validation import dump_json

        self._store.set_progress(self.job_id, self.fence, dump_json(storable_value(progress), "progress"))

    def append_output(self, text):
        """Append text to the job's output (the last OUTPUT_MAX_CHARS characters are kept; NUL and
        surrogates become U+FFFD)."""
        self._store.append_output(self.job_id, self.fence, storable_text(str(text)), self._output_max_chars)


def current_job():
    """The JobContext of the job running in this thread, or None outside a job."""
    return getattr(_local, "job", None)


def _set_current_job(context):
    _local.job = context


def json_result(value):
    """Serialise a task's return value, made storable; raises TypeError/ValueError when it is
    not JSON."""
    return storable_json(value)
