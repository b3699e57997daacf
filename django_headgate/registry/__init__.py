"""What a task is: the registry of the functions a worker may call (``tasks.py``), their retry
rules (``retry_rules.py``) and the schedules of ``@headgate.task(cron=...)`` (``schedules.py``).

Named ``registry``, not ``tasks``: Django's autodiscovery imports every installed app's ``tasks``
module, and this package is an installed app.
"""
