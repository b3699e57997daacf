"""Migration 0002 creates exactly the frozen partitions, and migrates zero -> latest -> zero -> latest."""

import importlib
import re

import pytest
from django.core.management import call_command
from django.db import connection

from django_headgate.store import archive_layout as archive_months
from django_headgate.store.archive_layout import ARCHIVE_TABLE, PARTITIONS

migration = importlib.import_module("django_headgate.migrations.0002_job_archive")

PG_PARTITIONS = """
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid)
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'headgate_job_archive'::regclass
"""
PG_RELKIND = "SELECT relkind FROM pg_class WHERE oid = %s::regclass"
MYSQL_PARTITIONS = """
SELECT PARTITION_NAME, PARTITION_METHOD, PARTITION_DESCRIPTION FROM information_schema.PARTITIONS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s ORDER BY PARTITION_ORDINAL_POSITION
"""


def pg_bound(value):
    return "MINVALUE" if value is None else str(value)


def expected_pg_bound(partition):
    return f"({pg_bound(partition.start_ms)}) TO ({'MAXVALUE' if partition.end_ms is None else partition.end_ms})"


def migrated_partitions(vendor):
    """{name: bound text} of the archive's partitions as the database reports them."""
    with connection.cursor() as cursor:
        if vendor == "postgresql":
            cursor.execute(PG_PARTITIONS)
            return {name: re.sub(r"'(-?\d+)'", r"\1", bound).removeprefix("FOR VALUES FROM ")
                    for name, bound in cursor.fetchall()}
        cursor.execute(MYSQL_PARTITIONS, [ARCHIVE_TABLE])
        rows = cursor.fetchall()
        assert {method for _, method, _ in rows} == {"RANGE"}
        return {name: description for name, _, description in rows}


def expected_partitions(vendor):
    if vendor == "postgresql":
        return {p.table_name: expected_pg_bound(p) for p in PARTITIONS}
    return {p.partition_name: "MAXVALUE" if p.end_ms is None else str(p.end_ms) for p in PARTITIONS}


def test_migration_constants_are_the_runtime_constants():
    assert (migration.FIRST_YEAR, migration.LAST_YEAR) == (archive_months.FIRST_YEAR, archive_months.LAST_YEAR)
    assert [f"{y:04d}{m:02d}" for y, m in migration.MONTHS] == [p.key for p in archive_months.MONTHS]
    assert len(archive_months.MONTHS) == 84 and len(PARTITIONS) == 86
    assert migration.HORIZON_START_MS == archive_months.BEFORE_EDGE.end_ms == 1735689600000
    assert migration.HORIZON_END_MS == archive_months.AFTER_EDGE.start_ms == 1956528000000


@pytest.mark.django_db
def test_partitions_equal_the_frozen_months(vendor):
    if vendor == "sqlite":
        pytest.skip("SQLite keeps the archive in one plain table (no partitions).")
    assert migrated_partitions(vendor) == expected_partitions(vendor)


@pytest.mark.django_db
def test_postgresql_hot_table_is_plain_and_archive_is_partitioned(vendor):
    if vendor != "postgresql":
        pytest.skip("PostgreSQL relation kinds.")
    with connection.cursor() as cursor:
        cursor.execute(PG_RELKIND, ["headgate_job"])
        assert cursor.fetchone()[0] == "r"
        cursor.execute(PG_RELKIND, [ARCHIVE_TABLE])
        assert cursor.fetchone()[0] == "p"
        # The held table (migration 0011, a plain table) is no partition of the archive.
        cursor.execute("SELECT count(*) FROM pg_class WHERE relname LIKE 'headgate\\_job\\_archive%%' "
                       "AND relname <> 'headgate_job_archive_held' AND relkind IN ('r', 'p')")
        assert cursor.fetchone()[0] == 87


@pytest.mark.slow  # three full migrations: about 13 s on PostgreSQL
@pytest.mark.django_db(transaction=True)
def test_migrate_zero_latest_zero_latest(vendor):
    tables = connection.introspection.table_names
    try:
        call_command("migrate", "headgate", "zero", verbosity=0)
        assert ARCHIVE_TABLE not in tables() and "headgate_job" not in tables()
        call_command("migrate", "headgate", verbosity=0)
        assert ARCHIVE_TABLE in tables()
        call_command("migrate", "headgate", "0001", verbosity=0)
        assert ARCHIVE_TABLE not in tables() and "headgate_job" in tables()
        if vendor == "postgresql":
            assert not [t for t in tables() if t.startswith(f"{ARCHIVE_TABLE}_")]
    finally:
        call_command("migrate", "headgate", verbosity=0)
    assert ARCHIVE_TABLE in tables()
    if vendor != "sqlite":
        assert migrated_partitions(vendor) == expected_partitions(vendor)
