"""Role names follow a closed grammar; SQLite, which has no roles, refuses both commands."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from django_headgate.management.roles import InvalidRoleName, check_account_host, check_role_name


@pytest.mark.parametrize("name", ["runtime", "_r", "R2", "a" * 32])
def test_good_role_names(name):
    assert check_role_name(name, "runtime") == name


@pytest.mark.parametrize("name", ["", "2r", "a" * 33, 'x"; DROP TABLE t; --', "r'@'%", "ünïcode", "a-b", None])
def test_bad_role_names(name):
    with pytest.raises(InvalidRoleName):
        check_role_name(name, "runtime")


@pytest.mark.parametrize("host", ["'; DROP", "", "a b"])
def test_bad_account_hosts(host):
    with pytest.raises(InvalidRoleName):
        check_account_host(host)


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite only")
@pytest.mark.parametrize("command", [["headgate_roles"], ["headgate_preflight", "--as", "runtime"]])
def test_sqlite_refuses_with_a_clear_error(command):
    with pytest.raises(CommandError, match="not supported on 'sqlite'"):
        call_command(*command)
