"""The store: every SQL statement of django-headgate lives in this package, and only it writes
``headgate_job`` and the archive (tests/store/test_the_store_is_the_only_door.py).

``get_store(using)`` returns the :class:`~.base.BaseStore` implementation for a database alias,
chosen by the connection's vendor in :func:`_store_class`. Nothing outside this package asks the
vendor (tests/unit/test_house_rules.py): everything else asks the store's capability flags. The
privilege catalogs (``privileges.py``) and the horizon operations (``archive_horizon.py``) pick
their vendor module the same way.

Layout: ``base.py`` assembles the contract from its sections in ``contract/`` (``jobs``,
``heartbeats``, ``sweep``, ``worker``); ``fragments.py`` holds the SQL every vendor shares
(column lists, terminal states, fenced conditions, statement shapes); ``entries.py`` builds the
``errors`` entries; each vendor is a package (``postgresql/``, ``mysql/``, ``sqlite/``) with one
module per section, its statements beside the methods that run them. ``archive_layout.py`` is the
closed set of archive partitions and the prepared layout; ``archive_horizon.py`` and
``privileges.py`` (with their vendor modules) are the owner's DDL and the privilege catalogs.

How to add a statement: write it as a named ``SQL_*`` constant with a one-line comment (what it
does, which index serves it) in the vendor's section module, built from ``fragments.py`` where a
piece is shared. When a shared default method of ``contract/`` runs it, add its name to that
method's ``@runs(...)`` and define it in every vendor that keeps the default: a vendor class
missing it fails at import with ``TypeError`` naming it. A new operation is a method on the
section's contract class: ``@vendor_supplies`` when each vendor writes its own, or a default
with ``@runs`` when one shape fits; a vendor lacking the feature raises ``UnsupportedOnVendor``.
Its test goes into ``tests/store/contract/test_<section>.py``. Then regenerate the golden files
``tests/store/sql/<vendor>.sql`` (``python -m tests.store.render_sql``, docs/testing.md) and
commit them with the change: their diff is the SQL that changed.

How to add a vendor: a package with the four section modules and a ``BaseStore`` subclass that
sets ``vendor`` and ``statements = (jobs, heartbeats, sweep, worker)``, registered in
``_store_class`` below; it is done when ``tests/store/`` passes on it.
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
