"""After headgate_archive_horizon moves the horizon (--through, --detach-pruned-before), every
reader of "which months exist" sees the catalogue's answer: the admin's eviction month filter,
the headgate_roles recipe and headgate_preflight; and the recipe's roles can run both commands
(MariaDB's owner: LOCK TABLES) without the retention role gaining TRUNCATE on the new edge.

Destructive (it changes the archive layout): runs only with HG_TEST_ARCHIVE_PRUNE=1, in this run's
own test database, and puts the frozen layout back after every test.
"""

import os

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse

from tests.support.archive_layout import restore_frozen_layout
from tests.support.archive_rows import archive_rows
from tests.support.roles import applied, recipe, roles, run_as  # noqa: F401 (fixtures)

pytestmark = [
    pytest.mark.archive_prune,
    pytest.mark.slow,  # the layout is put back after every test
    pytest.mark.skipif(os.environ.get("HG_TEST_ARCHIVE_PRUNE") != "1",
                       reason="destructive archive horizon tests need HG_TEST_ARCHIVE_PRUNE=1"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture(autouse=True)
def partitioned(vendor):
    if vendor == "sqlite":
        pytest.skip("SQLite keeps the archive in one plain table: no months to move.")
    yield
    restore_frozen_layout()


def month_choices(client, **params):
    """``(month filter choices, rows listed)`` of the archive list, as the admin shows them."""
    response = client.get(reverse("admin:headgate_archivedjob_changelist"), params)
    assert response.status_code == 200
    changelist = response.context["cl"]
    spec = next(spec for spec in changelist.filter_specs if spec.parameter_name == "month")
    return [choice["display"] for choice in spec.choices(changelist)], changelist.result_count


def partition_names(text):
    """The archive partitions a recipe names (PostgreSQL tables)."""
    return {word.strip('",;') for word in text.split() if word.strip('",;').startswith("headgate_job_archive_")}


def preflight_every_profile(names):
    for profile in ("runtime", "retention", "owner"):
        done = run_as(names[profile], "headgate_preflight", "--as", profile)
        assert done.returncode == 0, (profile, done.stdout + done.stderr)


def as_owner(names, *args):
    done = run_as(names["owner"], "headgate_archive_horizon", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def extend(names):
    as_owner(names, "--through", "203312")


def analyze_archive():
    """Fresh catalogue estimates: the month filter hides months estimated empty, and autovacuum
    may have analysed a month while it was (an earlier test's rows)."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE headgate_job_archive" if connection.vendor == "postgresql"
                       else "ANALYZE TABLE headgate_job_archive")
        if connection.vendor != "postgresql":
            cursor.fetchall()


def detach(names):
    """Retire the empty months before 2025-05 (2025-03 holds a row and stays)."""
    archive_rows("202503", 1)
    analyze_archive()
    out = as_owner(names, "--detach-pruned-before", "202505")
    assert "202501" in out and "kept (they hold rows): 202503" in out, out


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(User.objects.create_superuser("horizon-admin"))
    return client


def test_the_admin_month_filter_follows_the_layout(applied, admin_client):
    extend(applied)
    archive_rows("203306", 3)
    analyze_archive()
    choices, _ = month_choices(admin_client)
    assert any(choice.startswith("2033-06") for choice in choices), choices
    assert not any(choice.startswith("after_2031") for choice in choices), choices
    assert month_choices(admin_client, month="203306")[1] == 3
    detach(applied)
    choices, _ = month_choices(admin_client)
    assert not any(choice.startswith(("2025-01", "2025-02", "2025-04")) for choice in choices), choices
    assert any(choice.startswith("2025-03") for choice in choices)
    assert month_choices(admin_client, month="202501")[1] == 0


def test_the_recipe_names_the_prepared_partitions(applied, vendor):
    if vendor != "postgresql":
        pytest.skip("MySQL/MariaDB grants are per table: the recipe names no partition.")
    extend(applied)
    names = partition_names(recipe(applied)[0])
    assert {"headgate_job_archive_203312", "headgate_job_archive_after_2033"} <= names
    assert "headgate_job_archive_after_2031" not in names
    detach(applied)
    names = partition_names(recipe(applied)[0])
    assert "headgate_job_archive_202501" not in names and "headgate_job_archive_202503" in names


def test_preflight_passes_for_every_profile_after_an_extension_and_a_detach(applied):
    """The recipe's owner runs both (MariaDB: --detach-pruned-before needs LOCK TABLES), and no
    profile reports a partition missing or one gone."""
    extend(applied)
    preflight_every_profile(applied)
    detach(applied)
    preflight_every_profile(applied)


def test_new_months_carry_the_retention_grant_and_the_new_edge_does_not(applied, vendor):
    if vendor != "postgresql":
        pytest.skip("MySQL/MariaDB grants are per table: new partitions share them.")
    extend(applied)
    retention, runtime = applied["retention"], applied["runtime"]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT has_table_privilege(%s, 'headgate_job_archive_203306', 'TRUNCATE'), "
            "has_table_privilege(%s, 'headgate_job_archive_after_2033', 'TRUNCATE'), "
            "has_table_privilege(%s, 'headgate_job_archive_203306', 'DELETE'), "
            "has_table_privilege(%s, 'headgate_job_archive_after_2033', 'INSERT')",
            [retention, retention, runtime, runtime])
        assert cursor.fetchone() == (True, False, True, True)
