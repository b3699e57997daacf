"""The cold archive ``headgate_job_archive`` (DESIGN §4, §7). Hand-written; never edit once published.

The table is range-partitioned on ``evicted_at_ms`` (store-time milliseconds) by UTC month, from
the FROZEN constants below (never from the current date, so every database that runs this
migration gets the same partitions, whenever it runs):

- PostgreSQL: a declarative partitioned parent, 84 monthly children
  ``headgate_job_archive_202501`` ... ``_203112`` and two edges ``_before_2025`` (MINVALUE ..
  2025-01-01) and ``_after_2031`` (2032-01-01 .. MAXVALUE); no DEFAULT partition, so later months
  can still be split off the edge and attached by a forward migration.
- MySQL/MariaDB: one table with partitions ``p_before_2025``, ``p202501`` ... ``p203112``,
  ``p_after_2031`` (MAXVALUE), created by ONE statement (MySQL cannot roll DDL back, so this
  migration holds nothing else). Partitioned tables there allow no foreign keys.
- SQLite: one plain table (no partitions); pruning a month is a DELETE of its range.

The database primary key is ``(archive_id, evicted_at_ms)``: a partition key must be part of
every unique key. Django's state says ``archive_id`` is the primary key (the admin does not
handle composite keys); the state is created by ``SeparateDatabaseAndState`` and the DDL below is
the only schema this table ever gets. ``expires_at_ms`` is a stored generated column
(``evicted_at_ms + archive_retention_ms``) whose index lets a prune check "is any row of this
month still unexpired?" with one index probe.

The migration's DDL branches on ``schema_editor.connection.vendor`` (DESIGN §3): it is frozen
with the migration, not shared with the store.
"""

import calendar

from django.db import migrations, models

TABLE = "headgate_job_archive"
TERMINAL_STATES = [("succeeded", "Succeeded"), ("dead", "Dead"), ("cancelled", "Cancelled")]

# FROZEN horizon: the monthly partitions cover 2025-01 .. 2031-12. Extending it is a new migration.
FIRST_YEAR = 2025
LAST_YEAR = 2031
MONTHS = tuple((year, month) for year in range(FIRST_YEAR, LAST_YEAR + 1) for month in range(1, 13))


def month_start_ms(year, month):
    return calendar.timegm((year, month, 1, 0, 0, 0)) * 1000


def month_end_ms(year, month):
    return month_start_ms(year + 1, 1) if month == 12 else month_start_ms(year, month + 1)


HORIZON_START_MS = month_start_ms(FIRST_YEAR, 1)  # 2025-01-01T00:00:00Z
HORIZON_END_MS = month_end_ms(LAST_YEAR, 12)  # 2032-01-01T00:00:00Z

# (column, PostgreSQL type, MySQL type, SQLite type, nullable). MySQL's UUID type is the one
# Django uses for UUIDField on that server ("uuid" on MariaDB >= 10.7, else "char(32)"), so the
# archive's job_id has exactly the type of headgate_job.id that the sweep copies into it.
UUID = "{uuid}"
COLUMNS = (
    ("archive_id", "uuid", UUID, "char(32)", False),
    ("job_id", "uuid", UUID, "char(32)", False),
    ("queue", "varchar(64)", "varchar(64)", "varchar(64)", False),
    ("task", "varchar(255)", "varchar(255)", "varchar(255)", False),
    ("args", "jsonb", "json", "text", False),
    ("kwargs", "jsonb", "json", "text", False),
    ("errors", "jsonb", "json", "text", False),
    ("attempts", "integer", "integer", "integer", False),
    ("fingerprint", "varchar(64)", "varchar(64)", "varchar(64)", False),
    ("terminal_state", "varchar(16)", "varchar(16)", "varchar(16)", False),
    ("result", "jsonb", "json", "text", True),
    ("tags", "jsonb", "json", "text", False),
    ("created_at", "timestamp with time zone", "datetime(6)", "datetime", False),
    ("finished_at", "timestamp with time zone", "datetime(6)", "datetime", True),
    ("evicted_at_ms", "bigint", "bigint", "bigint", False),
    ("archive_retention_ms", "bigint", "bigint", "bigint", False),
)
JSON_COLUMNS = ("args", "kwargs", "errors", "result", "tags")
GENERATED_COLUMN = "expires_at_ms"
GENERATED_EXPRESSION = "{evicted} + {retention}"
PRIMARY_KEY = ("archive_id", "evicted_at_ms")
# (index name, columns): the audit view (queue filter + newest first; newest first; lookup by
# job id) and the prune check (any row of a month with expires_at_ms > now?).
INDEXES = (
    ("headgate_archive_queue_idx", ("queue", "evicted_at_ms")),
    ("headgate_archive_evicted_idx", ("evicted_at_ms",)),
    ("headgate_archive_job_idx", ("job_id",)),
    ("headgate_archive_expires_idx", ("expires_at_ms",)),
)


def _column_lines(q, vendor, uuid_type):
    position = {"postgresql": 1, "mysql": 2, "sqlite": 3}[vendor]
    lines = []
    for column in COLUMNS:
        name, nullable = column[0], column[4]
        data_type = column[position].format(uuid=uuid_type)
        line = f"{q(name)} {data_type} {'NULL' if nullable else 'NOT NULL'}"
        if vendor == "sqlite" and name in JSON_COLUMNS:
            line += f" CHECK ((JSON_VALID({q(name)}) OR {q(name)} IS NULL))"
        lines.append(line)
    expression = GENERATED_EXPRESSION.format(evicted=q("evicted_at_ms"), retention=q("archive_retention_ms"))
    lines.append(f"{q(GENERATED_COLUMN)} bigint GENERATED ALWAYS AS ({expression}) STORED")
    return lines


def _columns(q, names):
    return ", ".join(q(name) for name in names)


def postgresql_statements(q):
    body = ",\n    ".join(
        _column_lines(q, "postgresql", None)
        + [f"CONSTRAINT {q(TABLE + '_pkey')} PRIMARY KEY ({_columns(q, PRIMARY_KEY)})"]
    )
    statements = [f"CREATE TABLE {q(TABLE)} (\n    {body}\n) PARTITION BY RANGE ({q('evicted_at_ms')})"]
    statements.append(
        f"CREATE TABLE {q(f'{TABLE}_before_{FIRST_YEAR}')} PARTITION OF {q(TABLE)} "
        f"FOR VALUES FROM (MINVALUE) TO ({HORIZON_START_MS})"
    )
    for year, month in MONTHS:
        statements.append(
            f"CREATE TABLE {q(f'{TABLE}_{year:04d}{month:02d}')} PARTITION OF {q(TABLE)} "
            f"FOR VALUES FROM ({month_start_ms(year, month)}) TO ({month_end_ms(year, month)})"
        )
    statements.append(
        f"CREATE TABLE {q(f'{TABLE}_after_{LAST_YEAR}')} PARTITION OF {q(TABLE)} "
        f"FOR VALUES FROM ({HORIZON_END_MS}) TO (MAXVALUE)"
    )
    # An index on the partitioned parent is created on every child (and on later attached ones).
    statements += [f"CREATE INDEX {q(name)} ON {q(TABLE)} ({_columns(q, cols)})" for name, cols in INDEXES]
    return statements


def mysql_statements(q, uuid_type):
    lines = _column_lines(q, "mysql", uuid_type) + [f"PRIMARY KEY ({_columns(q, PRIMARY_KEY)})"]
    lines += [f"KEY {q(name)} ({_columns(q, cols)})" for name, cols in INDEXES]
    partitions = [f"PARTITION {q(f'p_before_{FIRST_YEAR}')} VALUES LESS THAN ({HORIZON_START_MS})"]
    partitions += [
        f"PARTITION {q(f'p{year:04d}{month:02d}')} VALUES LESS THAN ({month_end_ms(year, month)})"
        for year, month in MONTHS
    ]
    partitions.append(f"PARTITION {q(f'p_after_{LAST_YEAR}')} VALUES LESS THAN MAXVALUE")
    body = ",\n    ".join(lines)
    parts = ",\n    ".join(partitions)
    # One statement: the table and all its partitions exist together or not at all.
    return [
        f"CREATE TABLE {q(TABLE)} (\n    {body}\n) ENGINE=InnoDB\n"
        f"PARTITION BY RANGE ({q('evicted_at_ms')}) (\n    {parts}\n)"
    ]


def sqlite_statements(q):
    body = ",\n    ".join(_column_lines(q, "sqlite", None) + [f"PRIMARY KEY ({_columns(q, PRIMARY_KEY)})"])
    statements = [f"CREATE TABLE {q(TABLE)} (\n    {body}\n)"]
    statements += [f"CREATE INDEX {q(name)} ON {q(TABLE)} ({_columns(q, cols)})" for name, cols in INDEXES]
    return statements


def create_archive(apps, schema_editor):
    connection = schema_editor.connection
    q = schema_editor.quote_name
    if connection.vendor == "postgresql":
        statements = postgresql_statements(q)
    elif connection.vendor == "mysql":
        statements = mysql_statements(q, connection.data_types["UUIDField"])
    elif connection.vendor == "sqlite":
        statements = sqlite_statements(q)
    else:
        raise NotImplementedError(f"django-headgate has no archive DDL for {connection.vendor!r}.")
    for statement in statements:
        schema_editor.execute(statement)


def drop_archive(apps, schema_editor):
    # On PostgreSQL, dropping the partitioned parent drops every partition with it.
    schema_editor.execute(f"DROP TABLE {schema_editor.quote_name(TABLE)}")


class Migration(migrations.Migration):
    dependencies = [("headgate", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ArchivedJob",
                    fields=[
                        ("archive_id", models.UUIDField(primary_key=True, serialize=False)),
                        ("job_id", models.UUIDField()),
                        ("queue", models.CharField(max_length=64)),
                        ("task", models.CharField(max_length=255)),
                        ("args", models.JSONField(default=list)),
                        ("kwargs", models.JSONField(default=dict)),
                        ("errors", models.JSONField(default=list)),
                        ("attempts", models.IntegerField()),
                        ("fingerprint", models.CharField(max_length=64)),
                        ("terminal_state", models.CharField(choices=TERMINAL_STATES, max_length=16)),
                        ("result", models.JSONField(blank=True, null=True)),
                        ("tags", models.JSONField(default=list)),
                        ("created_at", models.DateTimeField()),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("evicted_at_ms", models.BigIntegerField()),
                        ("archive_retention_ms", models.BigIntegerField()),
                        ("expires_at_ms", models.GeneratedField(
                            db_persist=True,
                            expression=models.F("evicted_at_ms") + models.F("archive_retention_ms"),
                            output_field=models.BigIntegerField(),
                        )),
                    ],
                    options={
                        "verbose_name": "archived job",
                        "db_table": TABLE,
                        "ordering": ["-evicted_at_ms"],
                        "permissions": [("view_archive_payload", "Can reveal archived job payloads")],
                        "indexes": [
                            models.Index(fields=list(cols), name=name) for name, cols in INDEXES
                        ],
                    },
                ),
            ],
            database_operations=[
                migrations.RunPython(create_archive, drop_archive, atomic=False),
            ],
        ),
    ]
