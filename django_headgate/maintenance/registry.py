"""The maintenance duties by name, in the order a maintainer runs them.

Adding a duty is one module with a :class:`~.duty.Duty` subclass and one line in ``DUTIES``.
This module imports the duty modules and nothing imports it back from below, so the runner,
the ``headgate_maintain`` command and the status reader all read one list without a cycle.
"""

from .archive_horizon import ArchiveHorizonDuty
from .archive_prune import ArchivePruneDuty
from .dashboard_sample import DashboardSampleDuty
from .heartbeat_prune import HeartbeatPruneDuty
from .periodic import PeriodicDuty
from .rescue import RescueDuty
from .retention_sweep import RetentionSweepDuty

DUTIES = (RescueDuty, RetentionSweepDuty, HeartbeatPruneDuty, ArchivePruneDuty, ArchiveHorizonDuty,
          PeriodicDuty, DashboardSampleDuty)
DUTIES_BY_NAME = {duty.name: duty for duty in DUTIES}


def duty_names():
    return [duty.name for duty in DUTIES]


def duty_classes(names=None):
    """The duty classes named in ``names`` (all when None), in registry order. Raises
    ValueError naming the unknown ones."""
    if names is None:
        return list(DUTIES)
    unknown = sorted(set(names) - set(DUTIES_BY_NAME))
    if unknown:
        raise ValueError(f"Unknown duty {', '.join(unknown)}; known: {', '.join(sorted(DUTIES_BY_NAME))}.")
    return [duty for duty in DUTIES if duty.name in names]
