"""Lease rescue: running jobs whose lease expired go back to available (or dead when their
attempts are exhausted). This is what finishes the work of a worker that was killed."""

from .duty import Duty


class RescueDuty(Duty):
    name = "rescue"
    work_status = "rescued"

    @property
    def interval(self):
        return self.conf.rescue_interval

    @property
    def batch_size(self):
        return self.conf.rescue_batch_size

    def run_batch(self, limit):
        return self.store.rescue_expired(limit)
