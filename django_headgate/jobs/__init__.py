"""What an enqueue checks and writes: a ``JobSpec`` resolved into a ``NewJob`` (``new_jobs.py``,
with the retention class lookups of ``retention_classes.py`` and the ids of ``ids.py``), the
insert and its unique key's rules (``enqueue.py``, ``unique_modes.py``). ``api.py`` is the public
face; the periodic duty calls ``enqueue.py`` directly."""
