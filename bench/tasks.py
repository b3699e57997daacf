"""The no-op task every system runs (Headgate's copy; peers define theirs in their own module)."""


def noop():
    return None
