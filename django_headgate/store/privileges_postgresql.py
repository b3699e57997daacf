"""PostgreSQL privileges: the GRANT recipe of the three roles and the preflight's catalog reads.

Every query here is read-only (``pg_class``, ``has_table_privilege``, ``pg_has_role``); role and
table names come from closed sets (validated role names, the model tables, the frozen archive
partitions) and are quoted with the connection's ``quote_name``.
"""

import re

from django.db import connections

from ..exceptions import HeadgateError
from .postgresql.errors import INSUFFICIENT_PRIVILEGE
from .privileges import (
    RETENTION_HOLD_PRIVILEGES, RUNTIME_PRIVILEGES, Finding, archive_month_tables, archive_partition_tables, model_tables,
)

# Who is connected, in which database and schema, and the schema privileges that matter.
SQL_SESSION = """
SELECT current_user, current_database(), current_schema(),
       has_schema_privilege(current_schema(), 'USAGE'), has_schema_privilege(current_schema(), 'CREATE'),
       (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
"""
# Per table of the schema named in the list: the connected role's privileges and whether it
# owns the table (or is a member of its owner: then it can ALTER and DROP it).
SQL_TABLE_PRIVILEGES = """
SELECT c.relname,
       has_table_privilege(c.oid, 'SELECT'), has_table_privilege(c.oid, 'INSERT'),
       has_table_privilege(c.oid, 'UPDATE'), has_table_privilege(c.oid, 'DELETE'),
       has_table_privilege(c.oid, 'TRUNCATE'), has_table_privilege(c.oid, 'TRIGGER'),
       pg_has_role(c.relowner, 'USAGE')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relname = ANY(%s)
"""
PRIVILEGE_COLUMNS = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "TRIGGER", "OWNER")
# The roles the connected role is a member of (itself included; membership through other roles
# too, since it can SET ROLE to them) that carry a power no runtime or retention role needs: a
# role attribute, or one of the predefined roles named in the list.
SQL_POWERS = """
SELECT r.rolname, r.rolname = current_user, r.rolsuper, r.rolcreaterole, r.rolcreatedb,
       r.rolreplication, r.rolbypassrls, r.rolname = ANY(%s)
FROM pg_roles r
WHERE pg_has_role(current_user, r.oid, 'MEMBER')
  AND (r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls
       OR r.rolname = ANY(%s))
ORDER BY r.rolname
"""
# CREATE on the connected database (new schemas: DDL outside Headgate's tables).
SQL_DATABASE_CREATE = "SELECT has_database_privilege(current_database(), 'CREATE')"
#: Role attributes (pg_roles column order of SQL_POWERS) and the ALTER ROLE keyword that removes each.
ROLE_ATTRIBUTES = (("SUPERUSER", "NOSUPERUSER"), ("CREATEROLE", "NOCREATEROLE"), ("CREATEDB", "NOCREATEDB"),
                   ("REPLICATION", "NOREPLICATION"), ("BYPASSRLS", "NOBYPASSRLS"))
#: Predefined roles that read or write every table, files, or run programs on the server.
POWERFUL_ROLES = ("pg_execute_server_program", "pg_read_all_data", "pg_read_server_files",
                  "pg_write_all_data", "pg_write_server_files")
#: Table privileges the retention role must not hold on any Headgate table (TRUNCATE: on any
#: but the monthly partitions it prunes).
RETENTION_EXCESS = ("INSERT", "UPDATE", "DELETE", "TRIGGER", "OWNER")
# A database or schema name the recipe can quote without surprises.
SAFE_NAME_RE = re.compile(r"[A-Za-z0-9_$-]{1,63}")


class PostgreSQLPrivileges:
    def __init__(self, alias):
        self.alias = alias
        self.connection = connections[alias]

    def q(self, name):
        return self.connection.ops.quote_name(name)

    def _session(self):
        with self.connection.cursor() as cursor:
            cursor.execute(SQL_SESSION, [])
            user, database, schema, usage, create, superuser = cursor.fetchone()
        for name in (database, schema):
            if not SAFE_NAME_RE.fullmatch(name or ""):
                raise HeadgateError(f"Database or schema name {name!r} is outside [A-Za-z0-9_$-]; "
                                    "write the grants by hand.")
        return user, database, schema, usage, create, superuser

    def _tables(self, names):
        return ", ".join(self.q(name) for name in names)

    # -- the recipe ----------------------------------------------------------------------------

    def recipe(self, roles, host):
        """The statements (and ``--`` comments) that set up the three roles. ``host`` is unused."""
        _, database, schema, _, _, _ = self._session()
        owner, runtime, retention = (self.q(roles[name]) for name in ("owner", "runtime", "retention"))
        s = self.q(schema)
        every_table = model_tables() + archive_partition_tables(self.alias)
        months = archive_month_tables(self.alias)
        lines = [
            f"-- Headgate roles for PostgreSQL: database {self.q(database)}, schema {s}.",
            "-- Review, then run as a superuser or the tables' current owner. The roles must exist",
            "-- (CREATE ROLE ... LOGIN); this recipe creates no role and sets no password.",
            "",
            f"GRANT CONNECT ON DATABASE {self.q(database)} TO {owner}, {runtime}, {retention};",
            "",
            "-- owner: runs migrate and headgate_archive_horizon (DDL) and owns every Headgate table.",
            "-- migrate also writes the host's django_migrations table: grant that as your project does.",
            f"GRANT USAGE, CREATE ON SCHEMA {s} TO {owner};",
            *(f"ALTER TABLE {self.q(table)} OWNER TO {owner};" for table in every_table),
            "",
            "-- runtime: web processes, workers, duties, headgate_status. No DDL, no TRUNCATE.",
            f"GRANT USAGE ON SCHEMA {s} TO {runtime};",
            f"GRANT {', '.join(RUNTIME_PRIVILEGES)} ON TABLE {self._tables(every_table)} TO {runtime};",
            "",
            "-- retention: prune_archive_month (TRUNCATE of a closed monthly partition).",
            f"GRANT USAGE ON SCHEMA {s} TO {retention};",
            f"GRANT SELECT, TRUNCATE ON TABLE {self._tables(months)} TO {retention};",
            "-- and the legal holds it reads and the held rows it moves before a TRUNCATE.",
            *(f"GRANT {', '.join(privileges)} ON TABLE {self.q(table)} TO {retention};"
              for table, privileges in RETENTION_HOLD_PRIVILEGES.items()),
            "",
            "-- Partitions headgate_archive_horizon creates later take the grants of those they",
            "-- follow (a new month: the last prepared month's and the edge's; the new edge: the old",
            "-- edge's), so no default privileges are needed, and none give the retention role",
            "-- TRUNCATE on an edge. This recipe lists the partitions prepared now.",
        ]
        return lines

    # -- the preflight -------------------------------------------------------------------------

    def _privileges(self, names):
        with self.connection.cursor() as cursor:
            cursor.execute(SQL_TABLE_PRIVILEGES, [list(names)])
            return {row[0]: dict(zip(PRIVILEGE_COLUMNS, row[1:])) for row in cursor.fetchall()}

    def findings(self, profile):
        user, database, schema, usage, create, superuser = self._session()
        u, s = self.q(user), self.q(schema)
        if superuser:
            # A superuser holds everything: checking it would only list "fixes" for the admin
            # role the operator happened to connect with.
            return [Finding("superuser", "SUPERUSER", u, f"ALTER ROLE {u} NOSUPERUSER;")]
        every = model_tables() + archive_partition_tables(self.alias)
        if profile == "retention":
            needed, tables = ("SELECT", "TRUNCATE"), archive_month_tables(self.alias)
        elif profile == "runtime":
            needed, tables = RUNTIME_PRIVILEGES, every
        else:
            needed, tables = ("OWNER",), every
        held = self._privileges(every)
        found = self._missing(needed, tables, held, u)
        if profile == "retention":
            for table, privileges in RETENTION_HOLD_PRIVILEGES.items():
                found += self._missing(privileges, [table], held, u)
        if not usage:
            found.insert(1 if found and found[0].privilege == "table" else 0,
                         Finding("missing", "USAGE", f"schema {s}", f"GRANT USAGE ON SCHEMA {s} TO {u};"))
        if profile == "owner":
            if not create:
                found.append(Finding("missing", "CREATE", f"schema {s}", f"GRANT CREATE ON SCHEMA {s} TO {u};"))
            return found
        found += self._excess_powers(u)
        if create:
            found.append(Finding("excess", "CREATE (DDL)", f"schema {s}", f"REVOKE CREATE ON SCHEMA {s} FROM {u};"))
        if self._fetch_one(SQL_DATABASE_CREATE):
            d = self.q(database)
            found.append(Finding("excess", "CREATE (new schemas)", f"database {d}",
                                 f"REVOKE CREATE ON DATABASE {d} FROM {u};"))
        return found + self._excess_table_privileges(profile, every, held, u)

    def _fetch_one(self, sql, params=()):
        with self.connection.cursor() as cursor:
            cursor.execute(sql, list(params))
            return cursor.fetchone()[0]

    def _missing(self, needed, tables, held, u):
        found = []
        absent = [table for table in tables if table not in held]
        if absent:
            found.append(Finding("missing", "table", self._tables(absent), "run migrate first"))
        for privilege in needed:
            lacking = [table for table in tables if table in held and not held[table][privilege]]
            if not lacking:
                continue
            if privilege == "OWNER":
                fix = "; ".join(f"ALTER TABLE {self.q(table)} OWNER TO {u}" for table in lacking[:3])
                more = f" (and {len(lacking) - 3} more tables)" if len(lacking) > 3 else ""
                found.append(Finding("missing", "ownership", self._tables(lacking), fix + ";" + more))
            else:
                found.append(Finding("missing", privilege, self._tables(lacking),
                                     f"GRANT {privilege} ON TABLE {self._tables(lacking)} TO {u};"))
        return found

    def _excess_powers(self, u):
        """Role attributes and predefined roles the connected role holds, itself or through a
        role it is a member of (CREATEROLE alone lets a role grant itself the rest)."""
        with self.connection.cursor() as cursor:
            cursor.execute(SQL_POWERS, [list(POWERFUL_ROLES), list(POWERFUL_ROLES)])
            rows = cursor.fetchall()
        found = []
        for name, is_self, *flags, is_powerful_role in rows:
            role = self.q(name)
            for (attribute, removal), holds in zip(ROLE_ATTRIBUTES, flags):
                if not holds:
                    continue
                if is_self:
                    found.append(Finding("excess", attribute, f"role {u}", f"ALTER ROLE {u} {removal};"))
                else:
                    found.append(Finding("excess", f"{attribute} (member of {role})", f"role {u}",
                                         f"REVOKE {role} FROM {u};"))
            if is_powerful_role:
                found.append(Finding("excess", f"membership of {role}", f"role {u}", f"REVOKE {role} FROM {u};"))
        return found

    def _excess_table_privileges(self, profile, every, held, u):
        if profile == "runtime":
            excess = {privilege: every for privilege in ("TRUNCATE", "TRIGGER", "OWNER")}
        else:
            months = set(archive_month_tables(self.alias))
            excess = {privilege: [table for table in every if privilege not in RETENTION_HOLD_PRIVILEGES.get(table, ())]
                      for privilege in RETENTION_EXCESS}
            excess["TRUNCATE"] = [table for table in every if table not in months]
        found = []
        for privilege, tables in excess.items():
            holding = [table for table in tables if held.get(table, {}).get(privilege)]
            if not holding:
                continue
            if privilege == "OWNER":
                found.append(Finding("excess", "ownership (DDL: ALTER, DROP)", self._tables(holding),
                                     "make the owner role own them: ALTER TABLE ... OWNER TO <owner role>;"))
            else:
                found.append(Finding("excess", privilege, self._tables(holding),
                                     f"REVOKE {privilege} ON TABLE {self._tables(holding)} FROM {u};"))
        return found

    @staticmethod
    def is_insufficient_privilege(exc):
        seen = exc
        while seen is not None:
            if getattr(seen, "sqlstate", None) == INSUFFICIENT_PRIVILEGE:
                return True
            seen = seen.__cause__
        return False
