"""Tasks in a module that task discovery never imports (not an app's ``tasks`` module, not in
TASK_MODULES), as a project's ``myapp/emails.py`` imported by a view: only the test that means
it imports this module, after start-up. A worker would never register these tasks."""

import django_headgate as headgate


@headgate.task
def send_receipt(order_id):
    return order_id
