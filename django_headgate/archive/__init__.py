"""The cold archive's operations: pruning a closed month (``prune.py``), extending the horizon of
prepared months and retiring pruned ones (``horizon.py``), and the month a caller names
(``months.py``). Their SQL and the closed set of partitions are the store's
(``store/archive_layout.py``, ``store/archive_horizon.py``)."""
