"""The privilege catalog of a database alias: the GRANT recipe and the preflight's read-only
queries, one module per vendor (``privileges_postgresql.py``, ``privileges_mysql.py``).

SQLite has no roles: asking for its catalog raises UnsupportedOnVendor.
"""

from django.db import connections

from ..conf import get_database_alias
from ..exceptions import UnsupportedOnVendor


def get_privilege_catalog(using=None):
    alias = using or get_database_alias()
    vendor = connections[alias].vendor
    if vendor == "postgresql":
        from .privileges_postgresql import PostgreSQLPrivileges

        return PostgreSQLPrivileges(alias)
    if vendor == "mysql":
        from .privileges_mysql import MySQLPrivileges

        return MySQLPrivileges(alias)
    raise UnsupportedOnVendor(
        f"Database roles and privileges are not supported on {vendor!r}: SQLite has no roles "
        "(file permissions are its only access control).", vendor=vendor)


def is_insufficient_privilege(exc, using=None):
    """True when the driver error ``exc`` says the connected role lacks a privilege."""
    try:
        catalog = get_privilege_catalog(using)
    except UnsupportedOnVendor:
        return False
    return catalog.is_insufficient_privilege(exc)


def denied_table(exc, tables):
    """The name among ``tables`` (a closed set) that the permission error ``exc`` is about, the
    longest that its text names; None when it names none. Only a name from ``tables`` is ever
    returned: the error's own text is not shown."""
    text = str(exc)
    named = [table for table in tables if table in text]
    return max(named, key=len) if named else None
