"""A store-clock stand-in for scheduling tests: cadence without sleeping."""

from datetime import timedelta


class FakeClock:
    """Store-clock stand-in for scheduling: starts at the real store time, moves only when told.
    (Row eligibility is still judged by the database's own clock inside SQL.)"""

    def __init__(self, start):
        self.now = start

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += timedelta(seconds=seconds)
