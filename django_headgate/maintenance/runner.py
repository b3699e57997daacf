"""Runs the maintenance duties by name: every duty on its own cadence, or each exactly once.

Adding a duty is one module with a :class:`~.duty.Duty` subclass and one line in ``DUTIES``.
"""

import logging
import threading
import time

from ..conf import get_settings
from ..store import get_store
from .rescue import RescueDuty

logger = logging.getLogger(__name__)

DUTIES = [RescueDuty]


class MaintenanceRunner:
    def __init__(self, *, using=None, duty_names=None, own_identity=None):
        conf = get_settings()
        store = get_store(using or conf.database)
        classes = [cls for cls in DUTIES if duty_names is None or cls.name in duty_names]
        self.duties = [cls(store, conf, own_identity=own_identity) for cls in classes]
        self._next_due = {duty.name: 0.0 for duty in self.duties}
        self.stopped = threading.Event()

    def run_once(self):
        """Each enabled duty exactly one pass, now, whatever its cadence. Returns the outcomes."""
        return [duty.run_once() for duty in self.duties if duty.enabled]

    def run_due(self):
        """Run the duties whose time has come; returns their outcomes."""
        outcomes = []
        for duty in self.duties:
            if self.stopped.is_set():
                break
            if not duty.enabled or time.monotonic() < self._next_due[duty.name]:
                continue
            outcome = duty.run_once()
            self._next_due[duty.name] = time.monotonic() + duty.next_delay(outcome)
            outcomes.append(outcome)
        return outcomes

    def seconds_until_due(self):
        due = [self._next_due[d.name] for d in self.duties if d.enabled]
        return max(0.0, min(due) - time.monotonic()) if due else 60.0

    def run_forever(self):
        """Run duties on their cadence until ``stop()``."""
        while not self.stopped.is_set():
            self.run_due()
            self.stopped.wait(min(self.seconds_until_due(), 60.0))

    def stop(self):
        self.stopped.set()
        for duty in self.duties:
            duty.cancelled.set()
