"""The no-op task every system runs (Headgate's copy; peers define theirs in their own module)."""

import django_headgate as headgate


@headgate.task
def noop():
    return None


@headgate.task
def echo(payload):
    """Returns its argument: an encrypted queue's job decrypts it and encrypts the result."""
    return payload
