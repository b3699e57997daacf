"""A task the periodic tests register with a cron expression (tests/worker/test_periodic_decorated_cron.py).
Not a ``tasks`` module and not in TASK_MODULES: registered only by those tests."""


def heartbeat_report():
    return "ok"
