"""Test settings plus one yearly schedule, for maintainer subprocesses (a yearly tick cannot
roll over between two processes started together, except at New Year)."""

from tests.settings import *  # noqa: F403

HEADGATE = {**HEADGATE, "PERIODIC": {"yearly": {  # noqa: F405
    "task": "tests.testapp.tasks.add", "cron": "0 0 1 1 *", "args": [1, 2], "queue": "cron"}}}
