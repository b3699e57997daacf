"""MariaDB/MySQL privileges: the GRANT recipe of the three accounts and the preflight's reads.

The preflight reads ``information_schema`` (``USER_PRIVILEGES``, ``SCHEMA_PRIVILEGES``,
``TABLE_PRIVILEGES``), which shows the connected account's own grants (and those of its active
MariaDB role); it is read-only. Archive partitions are part of ``headgate_job_archive`` here, so
grants on that table cover the partitions made later too.
"""

import re

from django.db import DatabaseError, connections

from ..exceptions import HeadgateError
from .mysql.errors import ACCESS_DENIED
from .privileges import RETENTION_HOLD_PRIVILEGES, RUNTIME_PRIVILEGES, Finding, model_tables

ARCHIVE_TABLE = "headgate_job_archive"
# The connected account and database.
SQL_SESSION = "SELECT CURRENT_USER(), DATABASE()"
# MariaDB's active role (NULL when none); MySQL answers in another format or not at all.
SQL_CURRENT_ROLE = "SELECT CURRENT_ROLE()"
# Global grants of the account (and its role); IS_GRANTABLE is how GRANT OPTION shows.
SQL_GLOBAL_PRIVILEGES = (
    "SELECT PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE IN %s"
)
# Database-level grants whose pattern matches this database (`db`.* or a wildcard grant).
SQL_SCHEMA_PRIVILEGES = (
    "SELECT PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.SCHEMA_PRIVILEGES "
    "WHERE GRANTEE IN %s AND DATABASE() LIKE TABLE_SCHEMA"
)
# Table-level grants in this database.
SQL_TABLE_PRIVILEGES = (
    "SELECT TABLE_NAME, PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.TABLE_PRIVILEGES "
    "WHERE GRANTEE IN %s AND TABLE_SCHEMA = DATABASE()"
)
# Grants on the `mysql` system schema (accounts and their password hashes), at either level.
SQL_SYSTEM_SCHEMA_PRIVILEGES = (
    "SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE IN %s AND 'mysql' LIKE TABLE_SCHEMA "
    "UNION SELECT PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE IN %s AND TABLE_SCHEMA = 'mysql'"
)
# What every account holds through MariaDB's PUBLIC (10.11+; information_schema hides it from
# ordinary accounts, SHOW GRANTS does not). An error (MySQL, older MariaDB): nothing granted.
SQL_PUBLIC_GRANTS = "SHOW GRANTS FOR PUBLIC"
# Which Headgate tables exist (migrated).
SQL_TABLES = "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN %s"

#: The owner's, at database level; LOCK TABLES for headgate_archive_horizon --detach-pruned-before
#: (DROP PARTITION under LOCK TABLES ... WRITE).
OWNER_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX", "REFERENCES",
                    "LOCK TABLES")
DDL_PRIVILEGES = ("CREATE", "DROP", "ALTER", "INDEX", "TRIGGER")
#: Retention's DML: it prunes by TRUNCATE PARTITION (DROP), it never writes rows.
RETENTION_DML = ("INSERT", "UPDATE", "DELETE")
# One line of SHOW GRANTS FOR PUBLIC.
PUBLIC_GRANT_RE = re.compile(r"GRANT (?P<privileges>.+) ON (?P<target>\S+) TO PUBLIC(?: WITH GRANT OPTION)?")
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
            "-- owner: runs migrate and headgate_archive_horizon (DDL; LOCK TABLES for",
            "-- --detach-pruned-before). The database-level grant also covers the host's",
            "-- django_migrations table.",
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
            "-- and the legal holds it reads and the held rows it moves before a TRUNCATE.",
            *(f"GRANT {', '.join(privileges)} ON {self.q(database)}.{self.q(table)} TO {retention};"
              for table, privileges in RETENTION_HOLD_PRIVILEGES.items()),
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
        """``(global, schema, {table: privileges}, existing tables, grantable)``: the
        privileges held at each level, and the levels where any is held WITH GRANT OPTION."""
        grantable = set()
        with self.connection.cursor() as cursor:
            cursor.execute(SQL_GLOBAL_PRIVILEGES, [tuple(grantees)])
            global_rows = cursor.fetchall()
            cursor.execute(SQL_SCHEMA_PRIVILEGES, [tuple(grantees)])
            schema_rows = cursor.fetchall()
            cursor.execute(SQL_TABLE_PRIVILEGES, [tuple(grantees)])
            table_rows = cursor.fetchall()
            cursor.execute(SQL_TABLES, [tuple(tables)])
            existing = {row[0] for row in cursor.fetchall()}
        for level, rows in (("global", global_rows), ("schema", schema_rows)):
            grantable |= {level for _, is_grantable in rows if is_grantable == "YES"}
        table_privileges = {}
        for table, privilege, is_grantable in table_rows:
            table_privileges.setdefault(table, set()).add(privilege)
            if is_grantable == "YES":
                grantable.add(table)
        return ({row[0] for row in global_rows}, {row[0] for row in schema_rows}, table_privileges,
                existing, grantable)

    def _system_schema_privileges(self, grantees):
        with self.connection.cursor() as cursor:
            cursor.execute(SQL_SYSTEM_SCHEMA_PRIVILEGES, [tuple(grantees), tuple(grantees)])
            return sorted({row[0] for row in cursor.fetchall()})

    def _public_grants(self):
        """``[(privileges, target)]`` granted to PUBLIC, as SHOW GRANTS prints them."""
        try:
            with self.connection.cursor() as cursor:
                cursor.execute(SQL_PUBLIC_GRANTS, [])
                lines = [row[0] for row in cursor.fetchall()]
        except DatabaseError:  # MySQL, MariaDB before 10.11, or no grant to PUBLIC
            return []
        return [(match["privileges"], match["target"]) for line in lines
                if (match := PUBLIC_GRANT_RE.fullmatch(line)) and match["privileges"] != "USAGE"]

    def findings(self, profile):
        user, database = self._database()
        grantees = self._grantees(user)
        account = grantees[0]
        tables = model_tables()
        global_p, schema_p, table_p, existing, grantable = self._held(grantees, tables)
        if "SUPER" in global_p:
            # Holds every privilege that matters: checking it says nothing of the deployment's role.
            return [Finding("superuser", "SUPER", account, f"REVOKE SUPER ON *.* FROM {account};")]
        db = self._database_level(database)

        def has(table, privilege):
            return privilege in global_p or privilege in schema_p or privilege in table_p.get(table, ())

        def on(table):
            return f"{self.q(database)}.{self.q(table)}"

        found = []
        # information_schema.TABLES lists only tables the account has a privilege on: the
        # retention account sees the archive alone.
        expected = [ARCHIVE_TABLE, *RETENTION_HOLD_PRIVILEGES] if profile == "retention" else tables
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
            needed = {ARCHIVE_TABLE: ("SELECT", "DROP"), **RETENTION_HOLD_PRIVILEGES}
            excess = {table: tuple(p for p in RETENTION_DML if p not in RETENTION_HOLD_PRIVILEGES.get(table, ()))
                      + (() if table == ARCHIVE_TABLE else ("DROP",))
                      + ("CREATE", "ALTER", "INDEX", "TRIGGER") for table in tables}
            if "LOCK TABLES" not in schema_p:
                found.append(Finding("missing", "LOCK TABLES", f"{db} (database level)",
                                     f"GRANT LOCK TABLES ON {db} TO {account};"))
        for table, privileges in needed.items():
            for privilege in privileges:
                if table in existing and not has(table, privilege):
                    found.append(Finding("missing", privilege, on(table), f"GRANT {privilege} ON {on(table)} TO {account};"))
        # Any global privilege reaches every database and more (SHUTDOWN, CONNECTION ADMIN, ...).
        for privilege in sorted(global_p - {"USAGE"}):
            found.append(Finding("excess", privilege, "*.* (global)", f"REVOKE {privilege} ON *.* FROM {account};"))
        reported = set()
        for table, privileges in excess.items():
            for privilege in privileges:
                if privilege in schema_p and privilege not in reported:
                    reported.add(privilege)
                    found.append(Finding("excess", privilege, f"{db} (database level)",
                                         f"REVOKE {privilege} ON {db} FROM {account};"))
                if privilege in table_p.get(table, ()):
                    found.append(Finding("excess", privilege, on(table), f"REVOKE {privilege} ON {on(table)} FROM {account};"))
        return found + self._excess_beyond_headgate(grantees, account, db, grantable, on)

    def _excess_beyond_headgate(self, grantees, account, db, grantable, on):
        """GRANT OPTION at any level, privileges on the `mysql` schema, grants to PUBLIC."""
        found = []
        for level in sorted(grantable, key=lambda level: (level not in ("global", "schema"), level)):
            target = {"global": "*.*", "schema": db}.get(level) or on(level)
            found.append(Finding("excess", "GRANT OPTION", target, f"REVOKE GRANT OPTION ON {target} FROM {account};"))
        system = self._system_schema_privileges(grantees)
        if system:
            found.append(Finding("excess", ", ".join(system), "`mysql`.* (the accounts and their password hashes)",
                                 f"REVOKE {', '.join(system)} ON `mysql`.* FROM {account};"))
        for privileges, target in self._public_grants():
            found.append(Finding("excess", f"{privileges} (granted to PUBLIC: every account holds it)", target,
                                 f"REVOKE {privileges} ON {target} FROM PUBLIC;"))
        return found

    @staticmethod
    def is_insufficient_privilege(exc):
        seen = exc
        while seen is not None:
            args = getattr(seen, "args", ())
            if args and args[0] in ACCESS_DENIED:
                return True
            seen = seen.__cause__
        return False
