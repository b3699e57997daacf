"""Put the test database's archive back to the frozen layout of migration 0002 (the horizon
tests change it; tests/store/test_archive_migration.py and others expect the frozen partitions)."""

from django.db import connection

from django_headgate.store.archive_layout import (
    ARCHIVE_TABLE,
    BEFORE_EDGE,
    FROZEN_LAYOUT,
    PARTITIONS,
    forget_prepared_layout,
    prepared_layout,
)
from django_headgate.store import get_store


def restore_frozen_layout():
    forget_prepared_layout()
    store = get_store()
    if connection.vendor == "postgresql":
        _restore_postgresql(store)
    elif connection.vendor == "mysql":
        _restore_mysql()
    forget_prepared_layout()
    assert prepared_layout() == FROZEN_LAYOUT


def _restore_postgresql(store):
    q = connection.ops.quote_name
    layout = prepared_layout()
    with connection.cursor() as cursor:
        for edge in store.archive_horizon.detached_edges():
            cursor.execute(f"DROP TABLE {q(edge.table_name)}")
        for partition in layout.partitions:
            if partition not in PARTITIONS:
                cursor.execute(f"DROP TABLE {q(partition.table_name)}")
        for partition in PARTITIONS:
            if partition not in layout.partitions:
                start = "MINVALUE" if partition.start_ms is None else partition.start_ms
                end = "MAXVALUE" if partition.end_ms is None else partition.end_ms
                cursor.execute(f"CREATE TABLE {q(partition.table_name)} PARTITION OF {q(ARCHIVE_TABLE)} "
                               f"FOR VALUES FROM ({start}) TO ({end})")


def _restore_mysql():
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("SELECT PARTITION_NAME FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE() "
                       "AND TABLE_NAME = %s ORDER BY PARTITION_ORDINAL_POSITION", [ARCHIVE_TABLE])
        names = [name for (name,) in cursor.fetchall()]
        frozen = [p.partition_name for p in PARTITIONS]
        if names == frozen:
            return
        definitions = ", ".join(
            f"PARTITION {q(p.partition_name)} VALUES LESS THAN "
            + ("MAXVALUE" if p.end_ms is None else f"({p.end_ms})")
            for p in PARTITIONS if p is not BEFORE_EDGE)
        current = ", ".join(q(name) for name in names if name != BEFORE_EDGE.partition_name)
        cursor.execute(f"ALTER TABLE {q(ARCHIVE_TABLE)} REORGANIZE PARTITION {current} INTO ({definitions})")
