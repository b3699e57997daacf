"""Operator controls (DESIGN §16): verbs on jobs by filter, in bounded batches, for the API, the
``headgate_jobs`` command and the admin (``filters.py``, ``verbs.py``, ``listing.py``)."""
