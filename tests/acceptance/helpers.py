"""Helpers for tests that drive worker processes (polling is tests/support/waiting.py)."""


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
