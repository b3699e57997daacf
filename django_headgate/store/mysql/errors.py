"""MySQL's and MariaDB's error numbers, every one the store looks at, and what kind of error each
is (the store contract's errors section, ``contract/errors.py``)."""

from ..errors import connection_failed, is_data_error

ER_DUP_ENTRY = 1062
#: InnoDB broke a deadlock by rolling this transaction back.
ER_LOCK_DEADLOCK = 1213
#: lock_wait_timeout or innodb_lock_wait_timeout ran out (a row lock, LOCK TABLES).
ER_LOCK_WAIT_TIMEOUT = 1205
#: MariaDB's max_statement_time ran out.
ER_STATEMENT_TIMEOUT = 1969
#: MySQL's max_execution_time ran out.
ER_QUERY_TIMEOUT = 3024
#: Client and server errors that end the connection (1153: a statement over max_allowed_packet;
#: the server closes the connection after it).
CONNECTION_LOST = frozenset({1053, 1153, 1927, 2002, 2003, 2006, 2013, 2055, 4031})
#: About the row's data: bad string value, JSON check, invalid JSON text.
DATA_ERRORS = frozenset({1366, 3140, 4025})
#: What statement_budget stops.
BUDGET_EXCEEDED = frozenset({ER_STATEMENT_TIMEOUT, ER_QUERY_TIMEOUT, ER_LOCK_WAIT_TIMEOUT})
#: Gave up waiting for another transaction.
CONTENTION = BUDGET_EXCEEDED | {ER_LOCK_DEADLOCK}
#: A partition change refused for a privilege: ER_DBACCESS_DENIED_ERROR,
#: ER_TABLEACCESS_DENIED_ERROR, ER_SPECIFIC_ACCESS_DENIED_ERROR.
PRIVILEGE_ERRORS = frozenset({1044, 1142, 1227})
#: Access denied (the preflight's reading): ER_TABLEACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR,
#: ER_SPECIFIC_ACCESS_DENIED_ERROR, ER_COLUMNACCESS_DENIED_ERROR, ER_ACCESS_DENIED_NO_PASSWORD_ERROR.
ACCESS_DENIED = frozenset({1142, 1044, 1227, 1143, 1698})


def errno(exc):
    """The error number of a driver error (Django copies it into its own), or None."""
    args = getattr(exc.__cause__ or exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


class MySQLErrors:
    def is_unique_violation(self, exc):
        return errno(exc) == ER_DUP_ENTRY

    def is_deadlock(self, exc):
        return errno(exc) == ER_LOCK_DEADLOCK

    def is_budget_exceeded(self, exc):
        return errno(exc) in BUDGET_EXCEEDED

    def is_contention(self, exc):
        return errno(exc) in CONTENTION

    def is_connection_error(self, exc):
        return connection_failed(exc, errno(exc), CONNECTION_LOST.__contains__)

    def is_permanent_error(self, exc):
        return is_data_error(exc) or errno(exc) in DATA_ERRORS
