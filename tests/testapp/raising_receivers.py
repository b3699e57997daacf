"""Signal receivers that raise BaseExceptions (not Exception subclasses) on every job, for the
worker subprocesses of tests/acceptance/test_raising_receivers.py: tests/settings.py adds this
module to TASK_MODULES when HG_TEST_RAISING_RECEIVERS is set (importing it connects them).

The functions are private (``_``), so TASK_MODULES does not register them as tasks."""

import asyncio

import django

from django_headgate.signals import job_finished, job_started


class _ReceiverStop(BaseException):
    """A BaseException of a receiver's own."""


def _cancelled(**kwargs):
    raise asyncio.CancelledError("receiver cancelled")


def _interrupted(**kwargs):
    raise KeyboardInterrupt  # raised by code, in a job thread: not an interrupt of the process


def _stopped(**kwargs):
    raise _ReceiverStop


job_started.connect(_cancelled, weak=False)
job_finished.connect(_interrupted, weak=False)
job_finished.connect(_stopped, weak=False)  # still called after the one above raised

if django.VERSION >= (6, 0):
    from django.tasks.signals import task_finished, task_started

    task_started.connect(_cancelled, weak=False)
    task_finished.connect(_stopped, weak=False)
