"""The job filter every operator verb takes: ids, queue, task, state, tag, older than.

``job_filter()`` validates a caller's values and raises a ``HeadgateError`` subclass before
anything is read or written; the store turns a ``JobFilter`` into bound conditions."""

from dataclasses import dataclass

from ..exceptions import InvalidJobFilter
from ..jobs.new_jobs import check_job_id
from ..models import JobState
from ..values.durations import DAY, seconds_within, shown_value
from ..values.job_options import check_queue_name, check_tags, check_task_path

#: The longest ``older_than``: a century.
OLDER_THAN_MAX_SECONDS = 36_500 * DAY
#: The states a job can be in, in the order they are shown.
STATES = tuple(state.value for state in JobState)
#: The states each verb acts on (``cancel`` cancels waiting jobs and asks running ones to abort;
#: ``discard`` deletes only jobs that never ran).
ACTION_STATES = {
    "retry": ("dead", "cancelled"),
    "cancel": ("available", "waiting", "held_back", "running"),
    "run_now": ("available",),
    "reschedule": ("available",),
    "discard": ("available", "cancelled"),
}


@dataclass(frozen=True, slots=True)
class JobFilter:
    """Validated filter values; None (or an empty tuple) means "any"."""

    ids: tuple = ()
    queue: str | None = None
    task: str | None = None
    states: tuple = ()
    tag: str | None = None
    older_than: float | None = None  # seconds before the store clock (created_at)

    @property
    def is_empty(self):
        return not (self.ids or self.states) and {self.queue, self.task, self.tag, self.older_than} == {None}

    def id_parts(self, size):
        """The filter split so that no part names more than ``size`` ids (itself when it names none)."""
        if not self.ids:
            return [self]
        return [JobFilter(self.ids[start:start + size], self.queue, self.task, self.states, self.tag,
                          self.older_than) for start in range(0, len(self.ids), size)]


def job_filter(ids=None, queue=None, task=None, state=None, tag=None, older_than=None):
    """A validated :class:`JobFilter`. ``ids``: job ids; ``state``: one state or several;
    ``older_than``: a timedelta or seconds (jobs created before the store clock minus it).
    Raises ``InvalidJobFilter`` (or the value's own ``HeadgateError``) for bad values."""
    if isinstance(ids, (str, bytes)):
        ids = [ids]
    checked_ids = tuple(dict.fromkeys(check_job_id(job_id) for job_id in ids or ()))
    if ids is not None and not checked_ids:
        raise InvalidJobFilter("ids is empty: give at least one job id, or leave it out.", field="ids")
    return JobFilter(
        ids=checked_ids,
        queue=None if queue is None else check_queue_name(queue),
        task=None if task is None else check_task_path(task),
        states=check_states(state),
        tag=None if tag is None else check_tags([tag])[0],
        older_than=None if older_than is None else check_older_than(older_than),
    )


def check_states(state):
    states = [state] if isinstance(state, str) else list(state or ())
    unknown = [value for value in states if value not in STATES]
    if unknown:
        raise InvalidJobFilter(f"Unknown state {shown_value(unknown[0])}: use one of {', '.join(STATES)}.",
                               field="state")
    return tuple(value for value in STATES if value in states)


def check_older_than(value):
    seconds = seconds_within(value, 0, OLDER_THAN_MAX_SECONDS)
    if seconds is None:
        raise InvalidJobFilter(f"older_than must be a duration from 0 to 36,500 days (got {shown_value(value)}).",
                               field="older_than")
    return seconds


def action_states(action, job_filter):
    """The states ``action`` changes under ``job_filter``: its own, narrowed by the filter's.
    Raises ``InvalidJobFilter`` when the filter leaves none, or names no criterion at all (a verb
    never acts on every job by accident)."""
    if job_filter.is_empty:
        raise InvalidJobFilter(f"{action} needs a filter: ids, queue, task, state, tag or older_than.")
    states = ACTION_STATES[action]
    if job_filter.states:
        states = tuple(value for value in states if value in job_filter.states)
    if not states:
        raise InvalidJobFilter(f"{action} acts on {' or '.join(ACTION_STATES[action])} jobs; the state filter "
                               f"({', '.join(job_filter.states)}) leaves none.", field="state")
    return states
