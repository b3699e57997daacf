"""Helpers for tests that drive worker processes (polling is tests/support/waiting.py)."""


def finish(process, timeout=60):
    """Wait for a subprocess; return (returncode, stdout, stderr)."""
    stdout, stderr = process.communicate(timeout=timeout)
    return process.returncode, stdout, stderr
