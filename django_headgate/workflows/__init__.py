"""Workflows (DESIGN §17, docs/workflows.md): jobs that wait for other jobs (``dependencies.py``)
and chains of them (``chains.py``). The release of a waiting job is the store's
``release_dependents``, run in the transaction that ends its parent."""
