"""What the worker makes of a database error, by the vendor's code: a lock or statement timeout
and a deadlock are contention (try again later, the connection is fine), a dropped connection
is a lost database (a statement over MariaDB's max_allowed_packet drops it: 1153)."""

import sqlite3

import pytest
from django.db import OperationalError

from django_headgate.worker.dberrors import is_connection_error, is_contention


class PgError(Exception):
    def __init__(self, sqlstate):
        super().__init__("text that may quote row data")
        self.sqlstate = sqlstate


def django_error(cause):
    exc = OperationalError("text that may quote row data")
    exc.__cause__ = cause
    return exc


def sqlite_error(name):
    cause = sqlite3.OperationalError("database is locked")
    cause.sqlite_errorname = name
    return django_error(cause)


@pytest.mark.parametrize("exc", [
    django_error(PgError("55P03")),  # lock_timeout
    django_error(PgError("57014")),  # statement_timeout
    django_error(PgError("40P01")),  # deadlock
    django_error(PgError("40001")),  # serialization failure
    django_error(Exception(1205, "Lock wait timeout exceeded")),
    django_error(Exception(1969, "max_statement_time exceeded")),
    django_error(Exception(3024, "max_execution_time exceeded")),
    django_error(Exception(1213, "Deadlock found")),
    sqlite_error("SQLITE_BUSY"),
    sqlite_error("SQLITE_LOCKED_SHAREDCACHE"),
], ids=["pg-lock", "pg-statement", "pg-deadlock", "pg-serialization", "my-lock", "mariadb-statement",
        "mysql-statement", "my-deadlock", "sqlite-busy", "sqlite-locked"])
def test_contention_is_not_a_lost_connection(exc):
    assert is_contention(exc) and not is_connection_error(exc)


@pytest.mark.parametrize("code", [1153, 2006, 2013])
def test_a_dropped_mysql_connection_is_no_contention(code):
    exc = django_error(Exception(code, "gone"))
    assert is_connection_error(exc) and not is_contention(exc)


def test_a_data_error_is_neither():
    exc = django_error(PgError("22P02"))
    assert not is_contention(exc)
