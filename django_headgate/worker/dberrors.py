"""What the worker may say about a database error, and what kind of error it is.

A database error's text is never logged or stored by the worker: a PostgreSQL ``DETAIL`` or
``CONTEXT`` line, or a MySQL message, may quote row data (a job's result, its arguments). The
worker keeps the exception class and the vendor's code only.

Kinds, which decide what the worker does next:
- *connection*: the connection is gone or unusable; everything is retried after a reconnect;
- *permanent*: this row's data can never be written as it is (a data or integrity error);
- *contention*: the statement ran out of its lock or time budget, or lost a deadlock: another
  transaction holds what it needs (a row, or on MariaDB a range of an index). Nothing is wrong
  with the row or the connection: the write waits for a later round without spending a try, and
  a claim backs off;
- anything else: retry later, a bounded number of times.
"""

from django.db import DataError, IntegrityError, InterfaceError, NotSupportedError, ProgrammingError

# PostgreSQL SQLSTATEs of a server going away (class 08 is "connection exception").
PG_CONNECTION_STATES = {"57P01", "57P02", "57P03"}
PG_DEADLOCK = "40P01"
# PostgreSQL: lock_timeout, statement_timeout, serialization failure, deadlock.
PG_CONTENTION_STATES = {"55P03", "57014", "40001", PG_DEADLOCK}
# MySQL/MariaDB client and server errors that end the connection (1153: a statement over
# max_allowed_packet; the server closes the connection after it).
MYSQL_CONNECTION_ERRNOS = {"1053", "1153", "1927", "2002", "2003", "2006", "2013", "2055", "4031"}
MYSQL_DEADLOCK = "1213"
# MySQL/MariaDB: lock wait timeout, MariaDB max_statement_time, MySQL max_execution_time, deadlock.
MYSQL_CONTENTION_ERRNOS = {"1205", "1969", "3024", MYSQL_DEADLOCK}
# SQLite: another connection holds the database (or a table) past the busy timeout.
SQLITE_CONTENTION_NAMES = ("SQLITE_BUSY", "SQLITE_LOCKED")
# MySQL/MariaDB errors about the row's data: bad string value, JSON check, invalid JSON text.
MYSQL_DATA_ERRNOS = {"1366", "3140", "4025"}


def database_error_code(exc):
    """The vendor's code of a Django ``DatabaseError``: PostgreSQL SQLSTATE, MySQL errno,
    SQLite error name; None when the driver gives none (a connection that could not be made)."""
    cause = exc.__cause__ or exc
    sqlstate = getattr(cause, "sqlstate", None)
    if sqlstate:
        return sqlstate
    name = getattr(cause, "sqlite_errorname", None)
    if name:
        return name
    args = getattr(cause, "args", ())
    if args and isinstance(args[0], int):
        return str(args[0])
    return None


def describe_database_error(exc):
    """``"OperationalError (57014)"``: all the worker logs or stores about a database error."""
    code = database_error_code(exc)
    return f"{type(exc).__name__} ({code})" if code else type(exc).__name__


def is_connection_error(exc):
    """True when the connection itself failed: reconnect, then retry everything."""
    if isinstance(exc, InterfaceError):
        return True
    code = database_error_code(exc)
    if code is None:
        return not isinstance(exc, (DataError, IntegrityError, ProgrammingError, NotSupportedError))
    return code.startswith("08") or code in PG_CONNECTION_STATES or code in MYSQL_CONNECTION_ERRNOS


def is_permanent_error(exc):
    """True when retrying the same write cannot succeed (the row's data is the problem)."""
    if isinstance(exc, (DataError, IntegrityError, NotSupportedError)):
        return True
    return database_error_code(exc) in MYSQL_DATA_ERRNOS


def is_contention(exc):
    """True when the statement gave up waiting for another transaction (a lock or statement
    timeout, a deadlock, a serialization failure): try again later, the connection is fine."""
    code = database_error_code(exc)
    if code is None:
        return False
    return (code in PG_CONTENTION_STATES or code in MYSQL_CONTENTION_ERRNOS
            or code.startswith(SQLITE_CONTENTION_NAMES))


def is_deadlock(exc):
    return database_error_code(exc) in (PG_DEADLOCK, MYSQL_DEADLOCK)
