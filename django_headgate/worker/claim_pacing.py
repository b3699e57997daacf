"""When the claim loop claims, and whether the claim shares its statement with the
acknowledgements (DESIGN §8a).

A claim that runs out of its lock or time budget (the store's ``is_contention``: on MariaDB a
foreign ``SELECT ... FOR UPDATE`` in REPEATABLE READ holds the range of the claim index its
``UPDATE`` must write into) is not a lost database: the loop skips the claim and tries again
after a jittered pause that doubles from ``FIRST_PAUSE_SECONDS`` to ``MAX_PAUSE_SECONDS``, while
it goes on writing outcomes. When the statement that acknowledges *and* claims meets contention,
either half may be the one that waited: for ``APART_SECONDS`` the claim then runs first and
alone, the acknowledgements after it, so that a blocked acknowledgement never holds the claim.
"""

from .backoff import reconnect_delay_seconds

FIRST_PAUSE_SECONDS, MAX_PAUSE_SECONDS = 0.1, 2.0
APART_SECONDS = 10.0


class ClaimPacing:
    """Used on the claim loop's thread only; times are ``time.monotonic()``."""

    def __init__(self):
        self._failures = 0
        self._due_at = 0.0
        self._apart_until = 0.0

    def is_due(self, now):
        return now >= self._due_at

    def pause(self, now):
        """Seconds until the next claim may be tried (0 when it may be tried now)."""
        return max(0.0, self._due_at - now)

    def is_apart(self, now):
        """True while the claim runs alone, before the acknowledgements."""
        return now < self._apart_until

    def claimed(self):
        self._failures = 0

    def contended(self, now, claim_failed):
        """The combined statement (``claim_failed`` False) or the claim alone met contention.
        Returns the pause before the next claim (0 after the combined statement: the claim is
        tried alone at once)."""
        self._apart_until = now + APART_SECONDS
        if not claim_failed:
            return 0.0
        self._failures += 1
        pause = reconnect_delay_seconds(self._failures, FIRST_PAUSE_SECONDS, MAX_PAUSE_SECONDS)
        self._due_at = now + pause
        return pause
