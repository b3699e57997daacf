"""The privilege catalog of a database alias: the GRANT recipe and the preflight's read-only
queries, one module per vendor (``privileges_postgresql.py``, ``privileges_mysql.py``), and what
they share: the closed set of tables they name and the :class:`Finding` they report.

SQLite has no roles: asking for its catalog raises UnsupportedOnVendor.
"""

from dataclasses import dataclass

from django.apps import apps
from django.db import connections

from ..conf import get_database_alias
from ..exceptions import UnsupportedOnVendor
from .archive_layout import prepared_layout

#: What the runtime role holds on every Headgate table and archive partition.
RUNTIME_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")
#: What the retention role needs besides the archive's months (DESIGN §18): a prune reads the
#: legal holds and moves the held rows of the month into the held table.
RETENTION_HOLD_PRIVILEGES = {
    "headgate_legal_hold": ("SELECT",),
    "headgate_legal_hold_job": ("SELECT",),
    "headgate_job_archive_held": ("SELECT", "INSERT"),
}


def model_tables():
    """Every table of Headgate's models (the archive's parent included), sorted."""
    return sorted(model._meta.db_table for model in apps.get_app_config("headgate").get_models())


def archive_partition_tables(using):
    """PostgreSQL: every child table of the archive (the prepared months and the two edges),
    as the catalogue has them (``store.archive_layout.prepared_layout``: the horizon moves)."""
    return [partition.table_name for partition in prepared_layout(using).partitions]


def archive_month_tables(using):
    """PostgreSQL: the monthly children a prune truncates (never the edges)."""
    return [partition.table_name for partition in prepared_layout(using).months]


@dataclass(frozen=True)
class Finding:
    """One preflight result: a privilege the profile needs and lacks, or holds and must not; or
    (kind ``superuser``, then the only finding) a connected role that holds every privilege, so
    that nothing about the deployment's role can be learnt from it."""

    kind: str  # "missing", "excess" or "superuser"
    privilege: str
    target: str
    fix: str  # the statement that repairs it (a GRANT or a REVOKE)

    def __str__(self):
        if self.kind == "superuser":
            return (f"connected as {self.target}, a superuser: it holds every privilege, so there is "
                    "nothing to check. Preflight checks the role the deployment uses: run it with that "
                    "role's credentials (a deployment role must not be a superuser).")
        verb = "missing" if self.kind == "missing" else "must not have"
        return f"{verb} {self.privilege} on {self.target}: {self.fix}"


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
