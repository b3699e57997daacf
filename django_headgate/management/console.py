"""What the long-running Headgate commands (``headgate_worker``, ``headgate_maintain``) write to a
terminal: their log level, a default console handler, and the worker's progress line.

- **Level.** ``-v 0`` ERROR, ``-v 2`` INFO, ``-v 3`` DEBUG; at the default ``-v 1`` a level the
  host's ``LOGGING`` gave the ``django_headgate`` logger is kept, otherwise INFO.
- **Default handler.** When no handler reaches the records of ``django_headgate`` (Django's own
  default ``LOGGING`` configures the ``django`` logger only; ``logging.lastResort`` does not
  count), the command adds one on stderr for its run: ``HEADGATE["LOG_FORMAT"]`` "text"
  (time, level, logger, message) or "json" (:mod:`django_headgate.jsonlog`). A host's handlers are never changed.
- **Text from rows.** Queue names, task paths, worker ids and host names are read from rows
  anyone with write access to the tables could have written: every line that shows one, on a
  terminal or in a log, passes it through ``values.text.loggable`` (the one escaping function).
- **Progress line.** Drawn only on a terminal, rewritten in place with ``\\r``. The default handler
  erases it before writing a record and draws it again after, so the two never share a line. When
  the host's own handlers write to a terminal, which cannot be coordinated, no progress line is
  drawn.
"""

import logging
import threading
from contextlib import contextmanager

from ..jsonlog import JsonFormatter

HEADGATE_LOGGER = "django_headgate"
TEXT_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
#: Log level per ``--verbosity``; 1 (the default) keeps the host's level, else INFO.
VERBOSITY_LOG_LEVELS = {0: logging.ERROR, 2: logging.INFO, 3: logging.DEBUG}
ERASE_LINE = "\r\x1b[K"  # back to the line's start, erase to its end


class ProgressLine:
    """One status line on a terminal, redrawn in place; thread-safe. ``write`` and ``flush``
    are the terminal stream's."""

    def __init__(self, write, flush):
        self._write, self._flush = write, flush
        self._text = ""
        self._lock = threading.RLock()

    def show(self, text):
        with self._lock:
            self._text = text
            self._write(f"{ERASE_LINE}{text}")
            self._flush()

    def clear(self):
        """Erase the line for good (before the final summary)."""
        with self._lock:
            self._erase()
            self._text = ""

    @contextmanager
    def suspended(self):
        """Erase the line while something else writes to the terminal, then draw it again."""
        with self._lock:
            self._erase()
            try:
                yield
            finally:
                if self._text:
                    self._write(f"{ERASE_LINE}{self._text}")
                    self._flush()

    def _erase(self):
        if self._text:
            self._write(ERASE_LINE)
            self._flush()


class ConsoleHandler(logging.StreamHandler):
    """The commands' default handler (stderr); it keeps its records off the progress line."""

    progress = None

    def emit(self, record):
        if self.progress is None:
            super().emit(record)
            return
        with self.progress.suspended():
            super().emit(record)


def configured_handlers():
    """Every handler of the host's that a ``django_headgate`` record reaches: on the way up
    from ``django_headgate`` (as ``Logger.hasHandlers()`` walks it) and on its child loggers."""
    handlers, current = [], logging.getLogger(HEADGATE_LOGGER)
    while current is not None:
        handlers.extend(current.handlers)
        if not current.propagate:
            break
        current = current.parent
    for name, child in list(logging.root.manager.loggerDict.items()):
        if name.startswith(HEADGATE_LOGGER + ".") and isinstance(child, logging.Logger):
            handlers.extend(child.handlers)
    return [handler for handler in handlers if not isinstance(handler, ConsoleHandler)]


def writes_to_terminal(handler):
    stream = getattr(handler, "stream", None)
    try:
        return isinstance(handler, logging.StreamHandler) and stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def make_formatter(log_format):
    return JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)


class CommandLogging:
    """The logging of one command run: see the module's docstring. Use as a context manager;
    on exit the default handler (if any) is removed and the logger's level restored."""

    def __init__(self, verbosity, log_format):
        self.logger = logging.getLogger(HEADGATE_LOGGER)
        self.verbosity = verbosity
        self.log_format = log_format
        self.host_handlers = configured_handlers()
        self.handler = None
        self._saved_level = self.logger.level

    def __enter__(self):
        level = VERBOSITY_LOG_LEVELS.get(self.verbosity)
        if level is None and self.verbosity > 3:
            level = logging.DEBUG
        if level is None and self.logger.level == logging.NOTSET:
            level = logging.INFO
        if level is not None:
            self.logger.setLevel(level)
        if not self.host_handlers:
            self.handler = ConsoleHandler()  # stderr
            self.handler.setFormatter(make_formatter(self.log_format))
            self.logger.addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        if self.handler is not None:
            self.handler.progress = None
            self.logger.removeHandler(self.handler)
        self.logger.setLevel(self._saved_level)

    @property
    def host_writes_to_terminal(self):
        return any(writes_to_terminal(handler) for handler in self.host_handlers)

    def progress_line(self, stdout, wanted):
        """``(ProgressLine or None, why not)``: a line on ``stdout`` (Django's OutputWrapper)
        when it is a terminal, ``wanted`` (``--progress``/``--no-progress``/None) is not False
        and no host handler writes to a terminal."""
        if wanted is False:
            return None, None
        if not stdout.isatty():
            return None, "stdout is not a terminal"
        if self.host_writes_to_terminal:
            return None, "the LOGGING handlers write to the terminal"
        line = ProgressLine(lambda text: stdout.write(text, ending=""), stdout.flush)
        if self.handler is not None:
            self.handler.progress = line
        return line, None

