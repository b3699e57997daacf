"""Database roles (PostgreSQL) or accounts (MariaDB) for the preflight and recipe tests: each
test creates its own, with names unique to the test, applies the recipe if it asks, runs
commands connected as them, and drops them.

``roles`` yields ``{"owner": name, "runtime": name, "retention": name}``; ``applied`` is the same
after ``headgate_roles``'s recipe was executed. ``run_as(role, *args)`` runs ``manage.py <args>``
as a subprocess connected as that role.
"""

import subprocess
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from tests.conftest import ROOT, manage_command, subprocess_env


def execute(statements):
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def recipe(names):
    """``(text, statements)`` of ``headgate_roles`` for these role names."""
    out = StringIO()
    call_command("headgate_roles", "--owner", names["owner"], "--runtime", names["runtime"],
                 "--retention", names["retention"], stdout=out)
    text = out.getvalue()
    # One statement per line except the comments; the PostgreSQL GRANT lists are one line each.
    return text, [line for line in text.splitlines() if line.strip() and not line.startswith("--")]


def account(name):
    return f"'{name}'@'%'" if connection.vendor == "mysql" else f'"{name}"'


@pytest.fixture
def roles():
    tag = uuid.uuid4().hex[:8]
    names = {profile: f"hg_{tag}_{profile}" for profile in ("owner", "runtime", "retention")}
    if connection.vendor == "postgresql":
        execute([f'CREATE ROLE "{name}" LOGIN' for name in names.values()])
    else:
        execute([f"CREATE USER '{name}'@'%'" for name in names.values()])
    try:
        yield names
    finally:
        if connection.vendor == "postgresql":
            execute([f'REASSIGN OWNED BY "{names["owner"]}" TO CURRENT_USER']
                    + [f'DROP OWNED BY "{name}"' for name in names.values()]
                    + [f'DROP ROLE "{name}"' for name in names.values()])
        else:
            execute([f"DROP USER '{name}'@'%'" for name in names.values()])


@pytest.fixture
def applied(roles):
    _, statements = recipe(roles)
    execute(statements)
    return roles


def run_as(role, *args, timeout=120):
    env = subprocess_env()
    scheme = "postgres" if connection.vendor == "postgresql" else "mysql"
    port = 5432 if connection.vendor == "postgresql" else 3306
    env["DATABASE_URL"] = f"{scheme}://{role}@127.0.0.1:{port}/unused"
    return subprocess.run(manage_command(*args), env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
