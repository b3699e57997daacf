"""PostgreSQL privileges: the GRANT recipe of the three roles and the preflight's catalog reads.

Every query here is read-only (``pg_class``, ``has_table_privilege``, ``pg_has_role``); role and
table names come from closed sets (validated role names, the model tables, the frozen archive
partitions) and are quoted with the connection's ``quote_name``.
"""

import re

from django.db import connections

from ..exceptions import HeadgateError
from ..roles import RUNTIME_PRIVILEGES, Finding, archive_month_tables, archive_partition_tables, model_tables

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
# SQLSTATE insufficient_privilege (permission denied).
INSUFFICIENT_PRIVILEGE = "42501"
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
        every_table = model_tables() + archive_partition_tables()
        months = archive_month_tables()
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
            "",
            "-- Partitions the owner creates later (headgate_archive_horizon). Default privileges",
            "-- apply to every table the owner creates in this schema: give Headgate an owner of",
            "-- its own, or drop these two lines and re-run this recipe after extending the horizon.",
            f"ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA {s} "
            f"GRANT {', '.join(RUNTIME_PRIVILEGES)} ON TABLES TO {runtime};",
            f"ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA {s} GRANT SELECT, TRUNCATE ON TABLES TO {retention};",
        ]
        return lines

    # -- the preflight -------------------------------------------------------------------------

    def _privileges(self, names):
        with self.connection.cursor() as cursor:
            cursor.execute(SQL_TABLE_PRIVILEGES, [list(names)])
            return {row[0]: dict(zip(PRIVILEGE_COLUMNS, row[1:])) for row in cursor.fetchall()}

    def findings(self, profile):
        user, _, schema, usage, create, superuser = self._session()
        u, s = self.q(user), self.q(schema)
        if profile == "retention":
            needed, tables = ("SELECT", "TRUNCATE"), archive_month_tables()
        elif profile == "runtime":
            needed, tables = RUNTIME_PRIVILEGES, model_tables() + archive_partition_tables()
        else:
            needed, tables = ("OWNER",), model_tables() + archive_partition_tables()
        held = self._privileges(tables)
        found = []
        absent = [table for table in tables if table not in held]
        if absent:
            found.append(Finding("missing", "table", self._tables(absent), "run migrate first"))
        if not usage:
            found.append(Finding("missing", "USAGE", f"schema {s}", f"GRANT USAGE ON SCHEMA {s} TO {u};"))
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
        if profile == "owner":
            if not create:
                found.append(Finding("missing", "CREATE", f"schema {s}", f"GRANT CREATE ON SCHEMA {s} TO {u};"))
            return found
        if superuser:
            found.append(Finding("excess", "SUPERUSER", f"role {u}", f"ALTER ROLE {u} NOSUPERUSER;"))
        if create:
            found.append(Finding("excess", "CREATE (DDL)", f"schema {s}", f"REVOKE CREATE ON SCHEMA {s} FROM {u};"))
        every = model_tables() + archive_partition_tables()
        held_everywhere = self._privileges(every)
        excess = ("TRUNCATE", "TRIGGER", "OWNER") if profile == "runtime" else ("TRIGGER", "OWNER")
        for privilege in excess:
            holding = [table for table in every if held_everywhere.get(table, {}).get(privilege)]
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
