"""MariaDB/MySQL privileges: the GRANT recipe of the three accounts and the preflight's reads.

The preflight reads ``information_schema`` (``USER_PRIVILEGES``, ``SCHEMA_PRIVILEGES``,
``TABLE_PRIVILEGES``), which shows the connected account's own grants (and those of its active
MariaDB role); it is read-only. Archive partitions are part of ``headgate_job_archive`` here, so
grants on that table cover the partitions made later too.
"""

import re

from django.db import connections

from ..exceptions import HeadgateError
from ..roles import RUNTIME_PRIVILEGES, Finding, model_tables

ARCHIVE_TABLE = "headgate_job_archive"
# The connected account and database.
SQL_SESSION = "SELECT CURRENT_USER(), DATABASE()"
# MariaDB's active role (NULL when none); MySQL answers in another format or not at all.
SQL_CURRENT_ROLE = "SELECT CURRENT_ROLE()"
# Global grants of the account (and its role).
SQL_GLOBAL_PRIVILEGES = "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE IN %s"
# Database-level grants whose pattern matches this database (`db`.* or a wildcard grant).
SQL_SCHEMA_PRIVILEGES = (
    "SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES "
    "WHERE GRANTEE IN %s AND DATABASE() LIKE TABLE_SCHEMA"
)
# Table-level grants in this database.
SQL_TABLE_PRIVILEGES = (
    "SELECT TABLE_NAME, PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES "
    "WHERE GRANTEE IN %s AND TABLE_SCHEMA = DATABASE()"
)
# Which Headgate tables exist (migrated).
SQL_TABLES = "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN %s"

OWNER_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX", "REFERENCES")
DDL_PRIVILEGES = ("CREATE", "DROP", "ALTER", "INDEX", "TRIGGER")
DANGEROUS_GLOBAL = ("SUPER", "FILE", "CREATE USER", "GRANT OPTION")
# ER_TABLEACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR, ER_SPECIFIC_ACCESS_DENIED_ERROR,
# ER_COLUMNACCESS_DENIED_ERROR, ER_ACCESS_DENIED_NO_PASSWORD_ERROR.
ACCESS_DENIED_ERRNOS = frozenset({1142, 1044, 1227, 1143, 1698})
SAFE_NAME_RE = re.compile(r"[A-Za-z0-9_$-]{1,64}")


class MySQLPrivileges:
    def __init__(self, alias):
        self.alias = alias
        self.connection = connections[alias]

    def q(self, name):
        return self.connection.ops.quote_name(name)

    def _database(self):
        with self.connection.cursor() as cursor:
            cursor.execute(SQL_SESSION, [])
            user, database = cursor.fetchone()
        if not SAFE_NAME_RE.fullmatch(database or ""):
            raise HeadgateError(f"Database name {database!r} is outside [A-Za-z0-9_$-]; write the grants by hand.")
        return user, database

    def _database_level(self, database):
        """`db`.* with the LIKE wildcards escaped, so the grant names exactly this database."""
        return f"{self.q(database.replace('_', chr(92) + '_').replace('%', chr(92) + '%'))}.*"

    # -- the recipe ----------------------------------------------------------------------------

    def recipe(self, roles, host):
        _, database = self._database()
        owner, runtime, retention = (f"'{roles[name]}'@'{host}'" for name in ("owner", "runtime", "retention"))
        db = self._database_level(database)
        lines = [
            f"-- Headgate accounts for MariaDB/MySQL: database {self.q(database)}.",
            "-- Review, then run as an account with GRANT OPTION. The accounts must exist",
            f"-- (CREATE USER {runtime} IDENTIFIED BY ...); this recipe creates none and sets no password.",
            "",
            "-- owner: runs migrate and headgate_archive_horizon (DDL). The database-level grant",
            "-- also covers the host's django_migrations table.",
            f"GRANT {', '.join(OWNER_PRIVILEGES)} ON {db} TO {owner};",
            "",
            "-- runtime: web processes, workers, duties, headgate_status. No DDL. The archive's",
            "-- partitions, present and later, are part of its one table.",
            *(f"GRANT {', '.join(RUNTIME_PRIVILEGES)} ON {self.q(database)}.{self.q(table)} TO {runtime};"
              for table in model_tables()),
            "",
            "-- retention: prune_archive_month (LOCK TABLES, then ALTER TABLE ... TRUNCATE PARTITION,",
            "-- which needs DROP on the archive table: the measured minimum).",
            f"GRANT SELECT, DROP ON {self.q(database)}.{self.q(ARCHIVE_TABLE)} TO {retention};",
            f"GRANT LOCK TABLES ON {db} TO {retention};",
        ]
        return lines

    # -- the preflight -------------------------------------------------------------------------

    def _grantees(self, user):
        name, _, host = user.rpartition("@")
        grantees = [f"'{name}'@'{host}'"]
        try:
            with self.connection.cursor() as cursor:
                cursor.execute(SQL_CURRENT_ROLE, [])
                role = cursor.fetchone()[0]
        except Exception:  # MySQL without MariaDB's CURRENT_ROLE(): no active role to add
            role = None
        if isinstance(role, str) and re.fullmatch(r"[A-Za-z0-9_]+", role):
            grantees.append(f"'{role}'")
        return grantees

    def _held(self, grantees, tables):
        with self.connection.cursor() as cursor:
            cursor.execute(SQL_GLOBAL_PRIVILEGES, [tuple(grantees)])
            global_privileges = {row[0] for row in cursor.fetchall()}
            cursor.execute(SQL_SCHEMA_PRIVILEGES, [tuple(grantees)])
            schema_privileges = {row[0] for row in cursor.fetchall()}
            cursor.execute(SQL_TABLE_PRIVILEGES, [tuple(grantees)])
            table_privileges = {}
            for table, privilege in cursor.fetchall():
                table_privileges.setdefault(table, set()).add(privilege)
            cursor.execute(SQL_TABLES, [tuple(tables)])
            existing = {row[0] for row in cursor.fetchall()}
        return global_privileges, schema_privileges, table_privileges, existing

    def findings(self, profile):
        user, database = self._database()
        grantees = self._grantees(user)
        account = grantees[0]
        tables = model_tables()
        global_p, schema_p, table_p, existing = self._held(grantees, tables)
        db = self._database_level(database)

        def has(table, privilege):
            return privilege in global_p or privilege in schema_p or privilege in table_p.get(table, ())

        def on(table):
            return f"{self.q(database)}.{self.q(table)}"

        found = []
        # information_schema.TABLES lists only tables the account has a privilege on: the
        # retention account sees the archive alone.
        expected = [ARCHIVE_TABLE] if profile == "retention" else tables
        absent = [table for table in expected if table not in existing]
        if absent:
            found.append(Finding("missing", "table", ", ".join(absent), "run migrate first"))
        if profile == "owner":
            for privilege in OWNER_PRIVILEGES:
                if privilege not in global_p and privilege not in schema_p:
                    found.append(Finding("missing", privilege, f"{db} (database level)",
                                         f"GRANT {privilege} ON {db} TO {account};"))
            return found
        if profile == "runtime":
            needed = {table: RUNTIME_PRIVILEGES for table in tables}
            excess = {table: DDL_PRIVILEGES for table in tables}
        else:
            needed = {ARCHIVE_TABLE: ("SELECT", "DROP")}
            excess = {table: (() if table == ARCHIVE_TABLE else ("DROP",)) + ("CREATE", "ALTER", "INDEX", "TRIGGER")
                      for table in tables}
            if "LOCK TABLES" not in global_p and "LOCK TABLES" not in schema_p:
                found.append(Finding("missing", "LOCK TABLES", f"{db} (database level)",
                                     f"GRANT LOCK TABLES ON {db} TO {account};"))
        for table, privileges in needed.items():
            for privilege in privileges:
                if table in existing and not has(table, privilege):
                    found.append(Finding("missing", privilege, on(table), f"GRANT {privilege} ON {on(table)} TO {account};"))
        for privilege in DANGEROUS_GLOBAL:
            if privilege in global_p:
                found.append(Finding("excess", privilege, "*.* (global)", f"REVOKE {privilege} ON *.* FROM {account};"))
        reported = set()
        for table, privileges in excess.items():
            for privilege in privileges:
                if privilege in global_p and ("global", privilege) not in reported:
                    reported.add(("global", privilege))
                    found.append(Finding("excess", privilege, "*.* (global)", f"REVOKE {privilege} ON *.* FROM {account};"))
                elif privilege in schema_p and ("schema", privilege) not in reported:
                    reported.add(("schema", privilege))
                    found.append(Finding("excess", privilege, f"{db} (database level)",
                                         f"REVOKE {privilege} ON {db} FROM {account};"))
                if privilege in table_p.get(table, ()):
                    found.append(Finding("excess", privilege, on(table), f"REVOKE {privilege} ON {on(table)} FROM {account};"))
        return found

    @staticmethod
    def is_insufficient_privilege(exc):
        seen = exc
        while seen is not None:
            args = getattr(seen, "args", ())
            if args and args[0] in ACCESS_DENIED_ERRNOS:
                return True
            seen = seen.__cause__
        return False
