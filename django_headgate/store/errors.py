"""What may be said about a database error, on every vendor: its code and its class, never its
text (a PostgreSQL ``DETAIL`` or ``CONTEXT`` line, or a MySQL message, may quote row data: a
job's result, its arguments).

What *kind* of error it is (a lost connection, contention, a deadlock, bad data) is the store's
to say, by each vendor's codes: the errors section of the contract (``contract/errors.py``), and
the codes in each vendor package's ``errors.py``.
"""

from django.db import DataError, IntegrityError, InterfaceError, NotSupportedError, ProgrammingError


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
    """``"OperationalError (57014)"``: all that is logged or stored about a database error."""
    code = database_error_code(exc)
    return f"{type(exc).__name__} ({code})" if code else type(exc).__name__


def connection_failed(exc, code, lost):
    """The rule of every vendor for a lost connection: an ``InterfaceError``; an error with no
    code that is not about the statement or its data (a connection that could not be made); or
    a ``code`` that ``lost(code)`` says ends the connection."""
    if isinstance(exc, InterfaceError):
        return True
    if code is None:
        return not isinstance(exc, (DataError, IntegrityError, ProgrammingError, NotSupportedError))
    return lost(code)


def is_data_error(exc):
    """The rule of every vendor for bad data: a ``DataError``, ``IntegrityError`` or
    ``NotSupportedError`` (retrying the same write cannot succeed)."""
    return isinstance(exc, (DataError, IntegrityError, NotSupportedError))
