"""Least-privilege database roles (DESIGN §13): the reviewed GRANT recipe and the read-only preflight.

Three profiles:

- ``owner``: runs ``migrate`` and the archive horizon (DDL); owns every Headgate table.
- ``runtime``: web processes, workers, the duties, ``headgate_status``: SELECT, INSERT, UPDATE,
  DELETE on every Headgate table and archive partition; no DDL, no TRUNCATE.
- ``retention``: ``prune_archive_month``: PostgreSQL SELECT + TRUNCATE on the monthly archive
  partitions; MariaDB/MySQL SELECT + DROP on ``headgate_job_archive`` and LOCK TABLES (the
  measured minimum for ``ALTER TABLE ... TRUNCATE PARTITION`` under ``LOCK TABLES``).

The vendor's SQL (recipe text, privilege catalog queries) lives in ``store/privileges_*.py``, and
the closed set of tables and the findings in ``store/privileges.py``; this module holds the
profiles and the grammar of role names, behind ``headgate_roles`` and ``headgate_preflight``.
"""

import re

from ..exceptions import HeadgateError
from ..store.archive_layout import prepared_layout
from ..store.privileges import get_privilege_catalog

PROFILES = ("owner", "runtime", "retention")
#: Role (user) names: an identifier every vendor accepts unquoted; quoted all the same.
ROLE_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
#: MariaDB/MySQL account host part: a host name, an address or a pattern (``%``).
ACCOUNT_HOST_RE = re.compile(r"[A-Za-z0-9_.%:-]{1,60}")



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


def build_recipe(using, *, owner, runtime, retention, host="%"):
    """The reviewed GRANT recipe (list of SQL statements and comments) for ``using``'s vendor.

    Raises InvalidRoleName for a bad name, UnsupportedOnVendor on SQLite (no roles)."""
    names = {"owner": check_role_name(owner, "owner"), "runtime": check_role_name(runtime, "runtime"),
             "retention": check_role_name(retention, "retention")}
    catalog = get_privilege_catalog(using)
    prepared_layout(catalog.alias, refresh=True)
    return catalog.recipe(names, check_account_host(host))


def run_preflight(using, profile):
    """Check the connected role against ``profile`` (read-only); returns every Finding."""
    if profile not in PROFILES:
        raise HeadgateError(f"Unknown profile {profile!r} (known: {', '.join(PROFILES)}).")
    catalog = get_privilege_catalog(using)
    prepared_layout(catalog.alias, refresh=True)
    return catalog.findings(profile)
