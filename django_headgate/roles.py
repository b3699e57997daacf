"""Least-privilege database roles (DESIGN §13): the reviewed GRANT recipe and the read-only preflight.

Three profiles:

- ``owner``: runs ``migrate`` and the archive horizon (DDL); owns every Headgate table.
- ``runtime``: web processes, workers, the duties, ``headgate_status``: SELECT, INSERT, UPDATE,
  DELETE on every Headgate table and archive partition; no DDL, no TRUNCATE.
- ``retention``: ``prune_archive_month``: PostgreSQL SELECT + TRUNCATE on the monthly archive
  partitions; MariaDB/MySQL SELECT + DROP on ``headgate_job_archive`` and LOCK TABLES (the
  measured minimum for ``ALTER TABLE ... TRUNCATE PARTITION`` under ``LOCK TABLES``).

The vendor's SQL (recipe text, privilege catalog queries) lives in ``store/privileges_*.py``;
this module holds the closed sets (role names, tables) and the findings.
"""

import re
from dataclasses import dataclass

from django.apps import apps

from .store.archive_layout import prepared_layout
from .exceptions import HeadgateError

PROFILES = ("owner", "runtime", "retention")
#: Role (user) names: an identifier every vendor accepts unquoted; quoted all the same.
ROLE_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
#: MariaDB/MySQL account host part: a host name, an address or a pattern (``%``).
ACCOUNT_HOST_RE = re.compile(r"[A-Za-z0-9_.%:-]{1,60}")

RUNTIME_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")


class InvalidRoleName(HeadgateError):
    """Role names are 1 to 32 characters from [A-Za-z0-9_], not starting with a digit."""


def check_role_name(name, field):
    if not isinstance(name, str) or not ROLE_NAME_RE.fullmatch(name):
        raise InvalidRoleName(f"Invalid {field} role name {name!r}: use 1 to 32 characters from "
                              "[A-Za-z0-9_], not starting with a digit.", field=field)
    return name


def check_account_host(host):
    if not isinstance(host, str) or not ACCOUNT_HOST_RE.fullmatch(host):
        raise InvalidRoleName(f"Invalid account host {host!r}: use 1 to 60 characters from "
                              "[A-Za-z0-9_.%:-].", field="host")
    return host


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


def build_recipe(using, *, owner, runtime, retention, host="%"):
    """The reviewed GRANT recipe (list of SQL statements and comments) for ``using``'s vendor.

    Raises InvalidRoleName for a bad name, UnsupportedOnVendor on SQLite (no roles)."""
    from .store.privileges import get_privilege_catalog

    names = {"owner": check_role_name(owner, "owner"), "runtime": check_role_name(runtime, "runtime"),
             "retention": check_role_name(retention, "retention")}
    catalog = get_privilege_catalog(using)
    prepared_layout(catalog.alias, refresh=True)
    return catalog.recipe(names, check_account_host(host))


def run_preflight(using, profile):
    """Check the connected role against ``profile`` (read-only); returns every Finding."""
    from .store.privileges import get_privilege_catalog

    if profile not in PROFILES:
        raise HeadgateError(f"Unknown profile {profile!r} (known: {', '.join(PROFILES)}).")
    catalog = get_privilege_catalog(using)
    prepared_layout(catalog.alias, refresh=True)
    return catalog.findings(profile)
