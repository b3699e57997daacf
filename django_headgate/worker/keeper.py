"""Background thread that keeps a worker's claims alive: lease renewal and its heartbeat row.

Leases are renewed every third of the lease, so two renewals can fail before a lease lapses.
A lease that could not be renewed (rescued, re-claimed, cancelled) is reported through
``on_lease_lost``; the job keeps running but its acknowledgement will be rejected by the fence.
"""

import logging
import threading
import time

from django.db import DatabaseError, connections

logger = logging.getLogger(__name__)


class LeaseKeeper(threading.Thread):
    def __init__(self, *, store, worker_id, instance_id, lease_seconds, heartbeat_seconds,
                 held_leases, register_heartbeat, on_lease_lost):
        super().__init__(name="headgate-lease-keeper", daemon=True)
        self.store = store
        self.worker_id = worker_id
        self.instance_id = instance_id
        self.lease_seconds = lease_seconds
        self.renew_every = lease_seconds / 3
        self.heartbeat_every = heartbeat_seconds
        self.held_leases = held_leases  # callable -> [(job_id, fence), ...]
        self.register_heartbeat = register_heartbeat
        self.on_lease_lost = on_lease_lost
        self.stopped = threading.Event()

    def run(self):
        next_renewal = next_heartbeat = time.monotonic()
        while not self.stopped.is_set():
            now = time.monotonic()
            try:
                if now >= next_renewal:
                    self.renew_leases()
                    next_renewal = now + self.renew_every
                if now >= next_heartbeat:
                    self.renew_heartbeat()
                    next_heartbeat = now + self.heartbeat_every
            except DatabaseError:
                logger.exception("Lease keeper could not reach the database; retrying.",
                                 extra={"action": "keeper_error", "worker_id": self.worker_id})
                connections[self.store.alias].close()
            self.stopped.wait(max(0.05, min(next_renewal, next_heartbeat) - time.monotonic()))
        connections[self.store.alias].close()

    def renew_leases(self):
        held = self.held_leases()
        if not held:
            return
        renewed = self.store.renew_leases(self.worker_id, held, self.lease_seconds)
        for job_id, fence in held:
            if job_id not in renewed:
                self.on_lease_lost(job_id, fence)

    def renew_heartbeat(self):
        if not self.store.renew_heartbeat(self.worker_id, self.instance_id):
            # Our row was pruned or taken over by another instance: take it back, never crash.
            logger.warning("Heartbeat row missing or taken over; registering again.",
                           extra={"action": "heartbeat_reregister", "worker_id": self.worker_id})
            self.register_heartbeat()

    def stop(self):
        self.stopped.set()
