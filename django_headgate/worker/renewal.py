"""The lease keeper: the thread that keeps a worker's leases and its heartbeat row alive
(:class:`LeaseAndHeartbeatRenewal`).

Leases are renewed every third of the lease, so two renewals can fail before a lease lapses.
Renewal skips rows someone else has locked (it never waits, and on MariaDB it takes rows in the
same order as an acknowledgement, so the two cannot deadlock); a skipped row whose fence is still
ours is not lost, it is renewed next time. A lease that moved on (rescued, re-claimed, cancelled)
is reported through ``on_lease_lost``; the job keeps running but its acknowledgement will be
rejected by the fence. Renewed leases are reported through ``on_renewed`` with the local time
until which they are known to be live (the renewal's send time plus the lease): a buffered job
starts only within it (``threads.ClaimBuffer``).

Liveness is tied to progress (``watchdog.py``): the keeper records each completed iteration
(``progress_at``) and renews nothing once ``allows_renewal()`` turns False.

Job control (``control.py``): each renewal reports which jobs ``cancel()`` asked to stop. Every
``abort_check_seconds`` the leases of the tasks that have run for a quarter of a second or more
are renewed, so that a request reaches them within about that time (one statement for all of
them, none while every task is younger); and the keeper fails attempts whose time limit passed,
waking for the earliest deadline.

Its operator-facing name stays "lease keeper": the ``django_headgate.worker.keeper`` logger (the
name docs/worker.md documents, given here explicitly, so a ``LOGGING`` setting that names it keeps
working), its session label ``headgate keeper <worker id>``, its log lines and the watchdog's.
"""

import logging
import threading
import time

from django.db import DatabaseError, connections

from ..store.errors import describe_database_error
from .backoff import reconnect_delay_seconds
from .budget import TimeBudget
from .logs import RateLimitedLog

logger = logging.getLogger("django_headgate.worker.keeper")


class LeaseAndHeartbeatRenewal(threading.Thread):
    def __init__(self, *, store, worker_id, instance_id, lease_seconds, heartbeat_seconds,
                 held_leases, register_heartbeat, on_lease_lost, allows_renewal=lambda: True,
                 tick_seconds=5.0, budget_seconds=(5.0, 2.0), ratelog=None, session_name=None,
                 control=None, on_renewed=lambda leases, live_until: None):
        super().__init__(name="headgate-lease-keeper", daemon=True)
        self.store = store
        self.worker_id = worker_id
        self.instance_id = instance_id
        self.lease_seconds = lease_seconds
        self.renew_every = lease_seconds / 3
        self.heartbeat_every = heartbeat_seconds
        self.held_leases = held_leases  # callable -> [(job_id, fence), ...]
        self.register_heartbeat = register_heartbeat
        self.on_lease_lost = on_lease_lost  # (job_id, fence, state) -> None
        self.on_renewed = on_renewed  # ([(job_id, fence), ...], monotonic live-until) -> None
        self.allows_renewal = allows_renewal  # callable -> False once the watchdog fired
        self.tick_seconds = tick_seconds  # longest pause between iterations
        self.ratelog = ratelog or RateLimitedLog(logger)
        self.budget = TimeBudget(store, *budget_seconds, session_name=session_name,
                                 idle_transaction_seconds=lease_seconds)
        self.control = control  # JobControl, or None (no abort checks, no deadlines)
        self.stopped = threading.Event()
        self.progress_at = time.monotonic()

    def run(self):
        next_renewal = next_heartbeat = next_abort_check = time.monotonic()
        failures = 0
        try:
            while not self.stopped.is_set():
                now = self.progress_at = time.monotonic()
                if not self.allows_renewal():
                    return
                if self.control is not None:  # no database work: deadlines fire while it is away
                    self.control.expire_deadlines(now)
                try:
                    self.budget.ensure()
                    if now >= next_renewal:
                        skipped = self.renew_leases()
                        # A row locked by someone else is tried again soon, not a third of a lease later.
                        next_renewal = now + (min(1.0, self.renew_every) if skipped else self.renew_every)
                        next_abort_check = now + self._abort_check_every
                    elif now >= next_abort_check:
                        self.renew_long_running(now)
                        next_abort_check = now + self._abort_check_every
                    if now >= next_heartbeat:
                        self.renew_heartbeat()
                        next_heartbeat = now + self.heartbeat_every
                    failures = 0
                    self.ratelog.reset("keeper_error")
                except DatabaseError as exc:
                    failures += 1
                    self.ratelog.log(logging.WARNING, "Lease keeper could not reach the database (%s); retrying.",
                                     describe_database_error(exc), action="keeper_error", worker_id=self.worker_id)
                    connections[self.store.alias].close()
                    self.stopped.wait(reconnect_delay_seconds(failures, max_seconds=self.tick_seconds))
                    continue
                wait = min(next_renewal, next_heartbeat, next_abort_check, self._next_deadline()) - time.monotonic()
                self.stopped.wait(max(0.05, min(wait, self.tick_seconds)))
        finally:
            self.budget.clear()
            connections[self.store.alias].close()

    @property
    def _abort_check_every(self):
        return self.control.abort_check_seconds if self.control is not None else float("inf")

    def _next_deadline(self):
        deadline = self.control.next_deadline() if self.control is not None else None
        return float("inf") if deadline is None else deadline

    def renew_long_running(self, now):
        """Renew early the leases of tasks running for ``abort_check_seconds`` or more (their
        abort requests come back with the renewal); nothing when there are none."""
        leases = self.control.long_running(now)
        if leases:
            self._note_aborts(leases, self.store.renew_unlocked_leases(self.worker_id, leases, self.lease_seconds))

    def _note_aborts(self, leases, renewed):
        if self.control is not None and any(renewed.values()):
            self.control.request_abort([(job_id, fence) for job_id, fence in leases if renewed.get(job_id)])

    def renew_leases(self):
        """Renew every held lease; returns how many were skipped because their row was locked."""
        held = self.held_leases()
        if not held:
            return 0
        sent_at = time.monotonic()
        renewed = self.store.renew_unlocked_leases(self.worker_id, held, self.lease_seconds)
        self.on_renewed([(job_id, fence) for job_id, fence in held if job_id in renewed],
                        sent_at + self.lease_seconds)
        self._note_aborts(held, renewed)
        missing = [(job_id, fence) for job_id, fence in held if job_id not in renewed]
        if not missing:
            return 0
        fences = self.store.read_fences([job_id for job_id, _ in missing])
        skipped = 0
        for job_id, fence in missing:
            if fences.get(job_id) == ("running", fence):
                skipped += 1  # locked by someone else right now: still ours, renewed soon
            else:
                self.on_lease_lost(job_id, fence, fences.get(job_id, (None, None))[0])
        return skipped

    def renew_heartbeat(self):
        if not self.store.renew_heartbeat(self.worker_id, self.instance_id):
            # Our row was pruned or taken over by another instance: take it back, never crash.
            logger.warning("Heartbeat row missing or taken over; registering again.",
                           extra={"action": "heartbeat_reregister", "worker_id": self.worker_id})
            self.register_heartbeat()

    def stop(self):
        self.stopped.set()
