"""A task the periodic tests register again with a cron expression
(tests/maintenance/test_periodic_decorated_cron.py). Listed in TASK_MODULES, so that task discovery
imports it (a worker would): registered there without a cron, it is no schedule until a test
registers it with one."""


def heartbeat_report():
    return "ok"
