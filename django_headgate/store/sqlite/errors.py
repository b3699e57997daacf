"""SQLite's result codes (by name), every one the store looks at, and what kind of error each is
(the store contract's errors section, ``contract/errors.py``). SQLite has no statement timeout
and serialises writers: no error of it is a budget exceeded or a deadlock."""

from ..errors import connection_failed

#: Duplicate keys, by extended result code (sqlite3 names them).
UNIQUE_VIOLATIONS = ("SQLITE_CONSTRAINT_PRIMARYKEY", "SQLITE_CONSTRAINT_UNIQUE")
#: Another connection holds the database (or a table) past the busy timeout: the prefixes of
#: SQLITE_BUSY* and SQLITE_LOCKED*.
BUSY = ("SQLITE_BUSY", "SQLITE_LOCKED")


def result_name(exc):
    """The result code's name of a driver error (the cause of Django's), or None."""
    return getattr(exc.__cause__ or exc, "sqlite_errorname", None)


class SQLiteErrors:
    def is_unique_violation(self, exc):
        return result_name(exc) in UNIQUE_VIOLATIONS

    def is_contention(self, exc):
        return str(result_name(exc) or "").startswith(BUSY)

    def is_connection_error(self, exc):
        return connection_failed(exc, result_name(exc), lambda name: False)
