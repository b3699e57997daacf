"""The GRANT recipe applied to fresh roles on the real servers: the runtime role enqueues, runs a
worker, the duties and headgate_status, the retention role prunes, and the preflight passes for
them and fails, naming the grant, for a role missing one or holding TRUNCATE, DDL or a power
beyond its tables.

Each test creates roles (PostgreSQL) or accounts (MariaDB) with unique names and drops them
(tests/support/roles.py). The commands run as subprocesses connected as those roles.
"""

import os

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from django_headgate.models import Job
from tests.support.roles import account, applied, execute, recipe, roles, run_as  # noqa: F401 (fixtures)

pytestmark = [
    pytest.mark.acceptance,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor == "sqlite", reason="SQLite has no database roles"),
]
PRUNE_TESTS = os.environ.get("HG_TEST_ARCHIVE_PRUNE") == "1"


def test_recipe_quotes_validated_names_and_covers_the_partitions(roles):
    text, statements = recipe(roles)
    assert account(roles["runtime"]) in text
    if connection.vendor == "postgresql":
        assert '"headgate_job_archive_203112"' in text and '"headgate_job_archive_after_2031"' in text
        # New partitions take the grants of those they follow (headgate_archive_horizon): no
        # default privileges, which gave the retention role TRUNCATE on every new edge.
        assert "ALTER DEFAULT PRIVILEGES" not in text and "TRUNCATE" in text
    else:
        assert "LOCK TABLES" in text and "DROP ON" in text
    with pytest.raises(CommandError, match="role name"):
        call_command("headgate_roles", "--runtime", 'x"; DROP TABLE headgate_job; --')


def test_runtime_role_runs_everything_and_nothing_more(applied):
    runtime = applied["runtime"]
    enqueue = run_as(runtime, "shell", "-c",
                     "import django_headgate as h; h.enqueue('tests.testapp.tasks.add', args=(2, 3))")
    assert enqueue.returncode == 0, enqueue.stderr
    worker = run_as(runtime, "headgate_worker", "--burst", "--concurrency", "1")
    assert worker.returncode == 0, worker.stderr
    assert Job.objects.get().result == 5
    maintain = run_as(runtime, "headgate_maintain", "--once")
    assert maintain.returncode == 0 and "failed" not in maintain.stdout, maintain.stdout + maintain.stderr
    status = run_as(runtime, "headgate_status")
    assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr
    preflight = run_as(runtime, "headgate_preflight", "--as", "runtime")
    assert preflight.returncode == 0, preflight.stdout + preflight.stderr
    # Not a retention operator: prune is refused with a reason, never a traceback (and the
    # refusal destroys nothing: the LOCK or the TRUNCATE itself is denied).
    prune = run_as(runtime, "prune_archive_month", "202501")
    assert prune.returncode != 0 and "refused (insufficient_privilege)" in prune.stderr, prune.stderr
    assert "Traceback" not in prune.stderr
    assert run_as(runtime, "headgate_preflight", "--as", "retention").returncode != 0


def test_retention_role_prunes(applied):
    retention = applied["retention"]
    preflight = run_as(retention, "headgate_preflight", "--as", "retention")
    assert preflight.returncode == 0, preflight.stdout + preflight.stderr
    prune = run_as(retention, "prune_archive_month", "202501", *([] if PRUNE_TESTS else ["--dry-run"]))
    assert prune.returncode == 0, prune.stderr
    assert run_as(retention, "headgate_preflight", "--as", "runtime").returncode != 0


def test_owner_role_passes_its_preflight(applied):
    preflight = run_as(applied["owner"], "headgate_preflight", "--as", "owner")
    assert preflight.returncode == 0, preflight.stdout + preflight.stderr


def test_preflight_names_a_missing_grant(applied):
    runtime = applied["runtime"]
    execute([f"REVOKE DELETE ON headgate_worker_heartbeat FROM {account(runtime)}"])
    preflight = run_as(runtime, "headgate_preflight", "--as", "runtime")
    assert preflight.returncode == 1
    lines = [line for line in preflight.stdout.splitlines() if "missing" in line]
    assert len(lines) == 1 and "DELETE" in lines[0] and "headgate_worker_heartbeat" in lines[0]
    assert "GRANT DELETE ON" in lines[0]


@pytest.mark.parametrize("extra", ["TRUNCATE", "DDL"])
def test_preflight_names_truncate_or_ddl_held_by_the_runtime(applied, extra):
    runtime = applied["runtime"]
    if extra == "TRUNCATE" and connection.vendor == "postgresql":
        grant, named = f'GRANT TRUNCATE ON headgate_job TO "{runtime}"', "TRUNCATE"
    elif extra == "TRUNCATE":  # MariaDB truncates with DROP
        grant, named = f"GRANT DROP ON headgate_job TO '{runtime}'@'%'", "DROP"
    elif connection.vendor == "postgresql":
        grant, named = f'GRANT CREATE ON SCHEMA public TO "{runtime}"', "CREATE"
    else:
        grant, named = f"GRANT ALTER ON headgate_job TO '{runtime}'@'%'", "ALTER"
    execute([grant])
    preflight = run_as(runtime, "headgate_preflight", "--as", "runtime")
    assert preflight.returncode == 1
    lines = [line for line in preflight.stdout.splitlines() if "must not have" in line]
    assert len(lines) == 1 and named in lines[0] and ("REVOKE" in lines[0] or " NO" in lines[0]), preflight.stdout


def test_runtime_role_cannot_extend_the_archive_horizon_and_preflight_says_why(applied):
    """The horizon command is the owner's (DDL): the runtime role is refused with a reason and
    changes nothing, and its preflight as owner fails naming what it lacks."""
    runtime = applied["runtime"]
    preflight = run_as(runtime, "headgate_preflight", "--as", "owner")
    assert preflight.returncode == 1, preflight.stdout + preflight.stderr
    assert "missing" in preflight.stdout and "Traceback" not in preflight.stderr
    if not PRUNE_TESTS:
        pytest.skip("the refused extension runs only with HG_TEST_ARCHIVE_PRUNE=1 (it would change "
                    "the archive layout if the refusal broke)")
    extend = run_as(runtime, "headgate_archive_horizon", "--through", "203312")
    assert extend.returncode == 1, extend.stdout + extend.stderr
    assert "refused (insufficient_privilege)" in extend.stderr and "Traceback" not in extend.stderr
    from django_headgate.store.archive_layout import forget_prepared_layout, prepared_layout

    forget_prepared_layout()
    assert prepared_layout().months[-1].key == "203112"  # the refused run changed nothing


# Powers a runtime role must not hold beyond table grants: (vendor, statements, what the one
# "must not have" line names). {role} is the runtime role, {account} its quoted account, {db}
# the test database.
RUNTIME_POWERS = [
    ("postgresql", ['ALTER ROLE "{role}" CREATEROLE'], "CREATEROLE"),
    ("postgresql", ['ALTER ROLE "{role}" CREATEDB'], "CREATEDB"),
    ("postgresql", ['GRANT pg_read_all_data TO "{role}"'], "pg_read_all_data"),
    ("postgresql", ['GRANT pg_write_all_data TO "{role}"'], "pg_write_all_data"),
    ("postgresql", ['GRANT pg_execute_server_program TO "{role}"'], "pg_execute_server_program"),
    ("postgresql", ['GRANT CREATE ON DATABASE "{db}" TO "{role}"'], "CREATE (new schemas)"),
    ("mysql", ["GRANT SELECT ON `{db}`.headgate_job TO {account} WITH GRANT OPTION"], "GRANT OPTION"),
    ("mysql", ["GRANT SHUTDOWN ON *.* TO {account}"], "SHUTDOWN"),
    ("mysql", ["GRANT CONNECTION ADMIN ON *.* TO {account}"], "CONNECTION ADMIN"),
    ("mysql", ["GRANT SELECT ON mysql.* TO {account}"], "`mysql`.*"),
    ("mysql", ["GRANT SELECT ON `{db}`.headgate_job_archive TO PUBLIC"], "granted to PUBLIC"),
]


@pytest.mark.parametrize(("for_vendor", "statements", "named"), RUNTIME_POWERS,
                         ids=[named for _, _, named in RUNTIME_POWERS])
def test_preflight_names_powers_the_runtime_must_not_hold(applied, for_vendor, statements, named):
    if connection.vendor != for_vendor:
        pytest.skip(f"a {for_vendor} privilege")
    runtime = applied["runtime"]
    values = {"role": runtime, "account": account(runtime), "db": connection.settings_dict["NAME"]}
    execute([statement.format(**values) for statement in statements])
    try:
        preflight = run_as(runtime, "headgate_preflight", "--as", "runtime")
    finally:
        if "PUBLIC" in statements[0]:
            execute([statements[0].format(**values).replace("GRANT", "REVOKE").replace(" TO ", " FROM ")])
    assert preflight.returncode == 1, preflight.stdout + preflight.stderr
    lines = [line for line in preflight.stdout.splitlines() if "must not have" in line]
    assert len(lines) == 1 and named in lines[0] and ("REVOKE" in lines[0] or " NO" in lines[0]), preflight.stdout


@pytest.mark.parametrize("privilege", ["DELETE", "TRUNCATE"])
def test_preflight_names_dml_or_truncate_of_the_hot_table_held_by_retention(applied, privilege):
    retention = applied["retention"]
    if connection.vendor == "mysql" and privilege == "TRUNCATE":
        privilege = "DROP"  # MariaDB truncates with DROP
    execute([f"GRANT {privilege} ON headgate_job TO {account(retention)}"])
    preflight = run_as(retention, "headgate_preflight", "--as", "retention")
    assert preflight.returncode == 1, preflight.stdout + preflight.stderr
    lines = [line for line in preflight.stdout.splitlines() if "must not have" in line]
    assert len(lines) == 1 and privilege in lines[0] and "headgate_job" in lines[0], preflight.stdout


@pytest.mark.parametrize("profile", ["runtime", "retention", "owner"])
def test_preflight_as_a_superuser_says_so_in_one_line(profile):
    """The tests connect as the servers' superuser (postgres, root): preflight says the role is
    a superuser and that it checks the deployment's role, instead of "fixing" the admin role."""
    from io import StringIO

    out = StringIO()
    with pytest.raises(CommandError):
        call_command("headgate_preflight", "--as", profile, stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "a superuser" in lines[0] and "the role the deployment uses" in lines[0], lines
    assert "NOSUPERUSER" not in lines[0] and "REVOKE" not in lines[0]


def test_status_without_the_archive_partitions_says_what_it_lacks_in_one_line(applied):
    """PostgreSQL: DML granted on the archive's parent only (no partition grants); MariaDB: no
    SELECT on the archive. headgate_status names the table, points at headgate_preflight, and
    still shows every other section: no traceback."""
    runtime = applied["runtime"]
    from django_headgate.store.privileges import archive_partition_tables

    if connection.vendor == "postgresql":
        partitions = ", ".join(f'"{table}"' for table in archive_partition_tables("default"))
        execute([f'REVOKE ALL ON {partitions} FROM "{runtime}"'])
        lacking = "headgate_job_archive_"
    else:
        execute([f"REVOKE SELECT ON headgate_job_archive FROM {account(runtime)}"])
        lacking = "headgate_job_archive"
    status = run_as(runtime, "headgate_status")
    assert status.returncode == 0, status.stderr
    assert "Traceback" not in status.stderr and "Error" not in status.stderr, status.stderr
    lines = [line for line in status.stdout.splitlines() if "not readable" in line]
    assert lines and all(f"lacks SELECT on {lacking}" in line and "headgate_preflight" in line for line in lines)
    assert "Jobs" in status.stdout and "Workers" in status.stdout and "Maintenance" in status.stdout
    check = run_as(runtime, "headgate_status", "--check")
    assert check.returncode == 1 and "not readable" in check.stdout, check.stdout + check.stderr
