"""PostgreSQL's error codes (SQLSTATE), every one the store looks at, and what kind of error each
is (the store contract's errors section, ``contract/errors.py``)."""

from ..errors import connection_failed, database_error_code

UNIQUE_VIOLATION = "23505"
DEADLOCK_DETECTED = "40P01"
SERIALIZATION_FAILURE = "40001"
#: query_canceled: statement_timeout ran out.
QUERY_CANCELED = "57014"
#: lock_not_available: lock_timeout ran out (a LOCK TABLE, a row lock).
LOCK_NOT_AVAILABLE = "55P03"
#: insufficient_privilege: permission denied.
INSUFFICIENT_PRIVILEGE = "42501"
#: Class 08 is "connection exception".
CONNECTION_EXCEPTION_CLASS = "08"
#: The server going away: admin_shutdown, crash_shutdown, cannot_connect_now.
SERVER_GONE = frozenset({"57P01", "57P02", "57P03"})
#: What statement_budget stops.
BUDGET_EXCEEDED = frozenset({QUERY_CANCELED, LOCK_NOT_AVAILABLE})
#: Gave up waiting for another transaction.
CONTENTION = BUDGET_EXCEEDED | {DEADLOCK_DETECTED, SERIALIZATION_FAILURE}


def sqlstate(exc):
    """The SQLSTATE of a driver error (the cause of Django's), or None."""
    return getattr(exc.__cause__ or exc, "sqlstate", None)


def _ends_the_connection(code):
    return code.startswith(CONNECTION_EXCEPTION_CLASS) or code in SERVER_GONE


class PostgreSQLErrors:
    def is_unique_violation(self, exc):
        return sqlstate(exc) == UNIQUE_VIOLATION

    def is_deadlock(self, exc):
        return sqlstate(exc) == DEADLOCK_DETECTED

    def is_budget_exceeded(self, exc):
        return sqlstate(exc) in BUDGET_EXCEEDED

    def is_contention(self, exc):
        return sqlstate(exc) in CONTENTION

    def is_connection_error(self, exc):
        return connection_failed(exc, database_error_code(exc), _ends_the_connection)
