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
