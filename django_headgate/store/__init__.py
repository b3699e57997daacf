"""The store: every SQL statement of django-headgate lives in this package.

``get_store(using)`` returns the :class:`~.base.BaseStore` implementation for a database alias,
chosen by the connection's vendor. This is the one place that looks at ``connection.vendor``;
everything else asks the store's capability flags.
"""

from django.db import connections

from ..conf import get_database_alias
from ..exceptions import UnsupportedOnVendor

_stores = {}


def _store_class(vendor):
    if vendor == "postgresql":
        from .postgresql import PostgreSQLStore

        return PostgreSQLStore
    if vendor == "mysql":
        from .mysql import MySQLStore

        return MySQLStore
    if vendor == "sqlite":
        from .sqlite import SQLiteStore

        return SQLiteStore
    raise UnsupportedOnVendor(
        f"django-headgate supports PostgreSQL, MySQL/MariaDB and SQLite, not {vendor!r}.",
        vendor=vendor,
    )


def get_store(using=None):
    """The store for ``using`` (default: ``HEADGATE["DATABASE"]``)."""
    alias = using or get_database_alias()
    store = _stores.get(alias)
    if store is None:
        store = _stores[alias] = _store_class(connections[alias].vendor)(alias)
    return store
