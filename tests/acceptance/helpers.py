"""Helpers for tests that drive worker processes (polling is tests/support/waiting.py)."""

import threading


def finish(process, timeout=60):
    """Wait for a subprocess; return (returncode, stdout, stderr)."""
    stdout, stderr = process.communicate(timeout=timeout)
    return process.returncode, stdout, stderr


def render_terminal(output):
    """What a terminal shows for ``output``: \\r goes to the line's start, ESC[K erases to its end."""
    lines, line, column = [], [], 0
    i = 0
    while i < len(output):
        if output.startswith("\x1b[K", i):
            del line[column:]
            i += 3
            continue
        char = output[i]
        if char == "\r":
            column = 0
        elif char == "\n":
            lines.append("".join(line))
            line, column = [], 0
        else:
            line[column:column + 1] = [char]
            column += 1
        i += 1
    if line:
        lines.append("".join(line))
    return lines


class LineReader:
    """Reads a subprocess's stream on a thread of its own, so that a test can wait for a line
    while the process runs (``finish()`` cannot be used for that stream then)."""

    def __init__(self, stream):
        self.lines = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream):
        for line in stream:
            self.lines.append(line)

    def text(self):
        return "".join(self.lines)

    def join(self, timeout=10):
        """The whole text, once the stream has ended (the process exited)."""
        self._thread.join(timeout)
        return self.text()
