"""``headgate.chain(spec, spec, ...)``: each job depends on the one before (DESIGN §17)."""

from dataclasses import replace

from django.db import transaction

from ..conf import get_settings
from ..exceptions import InvalidDependency
from ..jobs.new_jobs import JobSpec
from .dependencies import enqueue_spec


def chain(*specs, using=None):
    """Enqueue ``specs`` (``JobSpec``) in one transaction, each depending on the previous one
    (besides its own ``depends_on``); returns their ``Job`` rows in order. The first runs as
    any job; each next one waits in state ``waiting`` until the one before succeeded (a failed
    link cancels the rest, unless a spec says ``on_parent_failure="run"``)."""
    if not specs:
        raise InvalidDependency("A chain needs at least one JobSpec.", field="specs")
    for spec in specs:
        if not isinstance(spec, JobSpec):
            raise InvalidDependency(f"A chain takes JobSpec instances, not {type(spec).__name__}.", field="specs")
    using = using or get_settings().database
    jobs = []
    with transaction.atomic(using=using):
        for spec in specs:
            if jobs:
                spec = replace(spec, depends_on=(*_as_tuple(spec.depends_on), jobs[-1].id))
            jobs.append(enqueue_spec(spec, using))
    return jobs


def _as_tuple(depends_on):
    if not depends_on:
        return ()
    if isinstance(depends_on, (str, bytes)) or not hasattr(depends_on, "__iter__"):
        return (depends_on,)
    return tuple(depends_on)
