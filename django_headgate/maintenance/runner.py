"""Runs the maintenance duties by name: every duty on its own cadence, or each exactly once.

The duties are listed in :mod:`.registry`. The runner is given the validated settings
(``conf.get_settings()``, read by the command that starts it) and hands them to each duty; its
constructor touches no database: the configured retention classes are registered
(``RETENTION_CLASSES``, DESIGN §6) by :meth:`MaintenanceRunner.prepare`, which the first pass
calls.

Cadence is kept in store-clock time: a duty is due when the store clock reaches both the
``next_run_at`` recorded in ``headgate_duty_run`` by the last pass that held its lock (shared by
every maintainer, kept across restarts) and the ``next_run_at`` of this runner's own last pass
(so a maintainer that found the lock taken does not retry before its own cadence). The clock is
injectable, so the arithmetic is testable without sleeping.
"""

import logging
import threading
import time
from datetime import timedelta

from django.db import DatabaseError, connections

from ..values.durations import describe_duration
from ..policies import register_configured_classes
from ..store import get_store
from .outcomes import load_schedule
from .registry import DUTIES, duty_classes

logger = logging.getLogger(__name__)

__all__ = ["DUTIES", "MaintenanceRunner"]

#: Longest sleep of ``run_forever`` between looks at the schedule.
MAX_WAIT_SECONDS = 60.0
#: Wait before trying again when the store clock cannot be read.
UNREACHABLE_RETRY_SECONDS = 10.0


class MaintenanceRunner:
    """``conf``: the validated settings (:func:`~django_headgate.conf.get_settings`).
    ``duty_names``: only these duties (ValueError for an unknown name)."""

    def __init__(self, conf, *, using=None, duty_names=None, own_identity=None, clock=None):
        self.conf = conf
        self.store = get_store(using or conf.database)
        #: Returns the store-clock "now"; tests inject a fake one.
        self.clock = clock or self.store.now
        self.duties = [cls(self.store, conf, own_identity=own_identity, clock=self.clock)
                       for cls in duty_classes(duty_names)]
        self._own_next_run_at = {}  # duty name -> next_run_at of this runner's last pass
        self._wait_seconds = 0.0
        self._prepared = False
        self.stopped = threading.Event()
        #: The label of this runner's connection in the server's session list (pg_stat_activity).
        self.session_name = "headgate maintain"

    def prepare(self):
        """Register ``HEADGATE["RETENTION_CLASSES"]`` so they exist before any duty runs
        (DESIGN §6); once per runner. Raises InvalidPolicy when a configured class changed."""
        if not self._prepared:
            register_configured_classes(using=self.store.alias, classes=self.conf.retention_classes)
            self._prepared = True

    def announce(self, once=False):
        """The start-up line: the duties it runs (with their cadence), those paused, the alias."""
        enabled = [duty for duty in self.duties if duty.enabled]
        paused = [duty.name for duty in self.duties if not duty.enabled]
        logger.info(
            "Maintainer started%s: duties %s%s; database %r.", " for one pass" if once else "",
            ", ".join(f"{duty.name} (every {describe_duration(duty.interval, short=True)})" for duty in enabled)
            or "(none enabled)", f"; paused by settings: {', '.join(paused)}" if paused else "", self.store.alias,
            extra={"action": "maintainer_start", "duties": [duty.name for duty in enabled], "paused": paused,
                   "once": once, "database": self.store.alias})

    def exclude_identity(self, identity):
        """Never prune ``identity`` = ``(worker_id, instance_id)``: the worker running this runner."""
        for duty in self.duties:
            duty.own_identity = identity

    def run_once(self):
        """Each enabled duty exactly one pass, now, whatever its cadence. Returns the outcomes."""
        self.prepare()
        self.store.name_session(self.session_name)
        return [self._run(duty) for duty in self.duties if duty.enabled]

    def run_due(self):
        """Run the duties whose time has come; returns their outcomes. Raises DatabaseError only
        when the store clock cannot be read (a duty reports its own failures)."""
        self.prepare()
        self.store.name_session(self.session_name)
        started = time.monotonic()
        now = self.clock()
        schedule = self._load_schedule()
        outcomes = []
        for duty in self.duties:
            if self.stopped.is_set():
                break
            due_at = self.due_at(duty, schedule)
            if not duty.enabled or (due_at is not None and now < due_at):
                continue
            outcomes.append(self._run(duty))
        later = now + timedelta(seconds=time.monotonic() - started)
        self._wait_seconds = self._seconds_until_due(later, schedule)
        return outcomes

    def due_at(self, duty, schedule):
        """When ``duty`` is next due (None: now), from the shared schedule and our last pass."""
        times = [t for t in (schedule.get(duty.name), self._own_next_run_at.get(duty.name)) if t is not None]
        return max(times) if times else None

    def seconds_until_due(self):
        return self._seconds_until_due(self.clock(), self._load_schedule())

    def run_forever(self):
        """Run duties on their cadence until ``stop()``."""
        try:
            while not self.stopped.is_set():
                try:
                    self.run_due()
                    wait = self._wait_seconds
                except DatabaseError:
                    logger.warning("Maintenance cannot read the store clock; retrying.",
                                   extra={"action": "maintenance_unreachable"})
                    connections[self.store.alias].close()
                    wait = UNREACHABLE_RETRY_SECONDS
                self.stopped.wait(min(wait, MAX_WAIT_SECONDS))
        finally:
            connections[self.store.alias].close()

    def stop(self):
        self.stopped.set()
        for duty in self.duties:
            duty.cancelled.set()

    # -- internals ----------------------------------------------------------------------------

    def _run(self, duty):
        outcome = duty.run_once()
        self._own_next_run_at[duty.name] = outcome.next_run_at
        return outcome

    def _load_schedule(self):
        try:
            return load_schedule(self.store.alias)
        except DatabaseError:
            # headgate_duty_run missing (migrations not applied) or unreachable: run on our own
            # cadence; the duties report any real outage.
            logger.warning("Cannot read headgate_duty_run; using this maintainer's own cadence.",
                           extra={"action": "duty_schedule_unreadable"})
            return {}

    def _seconds_until_due(self, now, schedule):
        waits = []
        for duty in self.duties:
            if not duty.enabled:
                continue
            due_at = self.due_at(duty, schedule)
            waits.append(0.0 if due_at is None else max(0.0, (due_at - now).total_seconds()))
        return min(waits) if waits else MAX_WAIT_SECONDS
