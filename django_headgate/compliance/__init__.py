"""Compliance data lifetime (DESIGN §18): legal holds (``holds``) and erasure of a data
subject's payloads by tag (``erasure``). The SQL they need lives in the store
(``store/holds.py``, ``store/<vendor>/compliance.py``); docs/compliance.md states the guarantees."""
