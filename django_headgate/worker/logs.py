"""Rate-limited log lines for loops that retry: at most one line a second per event.

A loop that retries every few milliseconds during an outage must not flood the log: the first
occurrence of an event is logged at once, repeats within ``every_seconds`` are counted and the
count is reported (``suppressed``) with the next line that is let through. Never pass a database
error's text or a payload: callers log ``dberrors.describe_database_error()`` only.
"""

import threading
import time


class RateLimitedLog:
    def __init__(self, logger, every_seconds=1.0, clock=time.monotonic):
        self._logger = logger
        self._every = every_seconds
        self._clock = clock
        self._last = {}  # action -> time of the last line let through
        self._suppressed = {}
        self._lock = threading.Lock()

    def log(self, level, message, *args, action, **extra):
        """Log ``message`` at ``level`` unless the same ``action`` was logged less than
        ``every_seconds`` ago. Returns True when the line was written."""
        now = self._clock()
        with self._lock:
            last = self._last.get(action)
            if last is not None and now - last < self._every:
                self._suppressed[action] = self._suppressed.get(action, 0) + 1
                return False
            self._last[action] = now
            suppressed = self._suppressed.pop(action, 0)
        self._logger.log(level, message, *args, extra={**extra, "action": action, "suppressed": suppressed})
        return True

    def reset(self, action):
        """Forget ``action`` (its outage is over): its next occurrence is logged at once."""
        with self._lock:
            self._last.pop(action, None)
            self._suppressed.pop(action, None)
