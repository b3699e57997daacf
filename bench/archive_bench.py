"""Archive prune (TRUNCATE of a month) versus a DELETE of the same rows, and sweep throughput.

    python -m bench.archive_bench --database-url URL [--rows 1000000 4000000]
                                  [--sweep-rows 200000] [--sweep-batch 500 5000] [--out FILE]

Use a scratch database (created when missing): the bench migrates it and empties the archive and
the hot table first. PostgreSQL and MySQL/MariaDB only (SQLite has no partitions to truncate).

Prune versus DELETE, for each ``--rows`` N:

1. N archived rows are bulk-loaded into the closed month 2026-03 (one SQL statement per 500,000
   rows): ~1 KB of JSON payload each (``args``), spread over the month, archive retention one day,
   so the month is fully expired; the archive's five indexes are maintained as in production.
   PostgreSQL then gets ``VACUUM (ANALYZE)`` and a ``CHECKPOINT``, MySQL/MariaDB ``ANALYZE TABLE``
   and a wait until InnoDB has purged earlier deletes, so both operations start from a settled,
   old month (what a month looks like when it is finally pruned);
2. ``prune_archive_month("202603")`` is timed: the whole API call (singleton lock, partition
   lock, store clock, expiry probe, TRUNCATE);
3. the same N rows are loaded again and settled the same way;
4. ``DELETE FROM headgate_job_archive WHERE evicted_at_ms >= start AND < end`` (what an operator
   would write without the prune API) is timed, and on PostgreSQL the ``VACUUM`` of the child
   that must follow it to make the space reusable is timed separately.

Sweep throughput (measured first), for each ``--sweep-batch`` B: ``--sweep-rows`` expired succeeded jobs (~1 KB
JSON args each) on a queue with an archive policy are bulk-loaded into ``headgate_job``; then
``RetentionSweepDuty.run_once()`` runs pass after pass (each pass: bounded transactions of B rows,
copy + delete together) until a pass evicts nothing. Reported: rows archived per second.
"""

import argparse
import os
import time
from datetime import datetime, timedelta, timezone

from bench.common import chunks, emit, log

MONTH = "202603"
CHUNK = 500_000
DAY_MS = 86_400_000
PAYLOAD_REPEAT = 30  # 30 x md5 hex = 960 characters of JSON text per row's args

PG_FILL_ARCHIVE = f"""
INSERT INTO headgate_job_archive (archive_id, job_id, queue, task, args, kwargs, errors, attempts,
    fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms)
SELECT gen_random_uuid(), gen_random_uuid(), 'billing', 'shop.tasks.charge',
       jsonb_build_array(jsonb_build_object('order', g, 'note', repeat(md5(g::text), {PAYLOAD_REPEAT}))),
       '{{}}', '[]', 1, md5(g::text) || md5((g + 1)::text), 'succeeded', '{{"ok": true}}', '["bench"]',
       %s, %s, %s + (g::bigint * %s / %s), %s
FROM generate_series(%s, %s) AS g
"""
MYSQL_FILL_ARCHIVE = f"""
INSERT INTO headgate_job_archive (archive_id, job_id, queue, task, args, kwargs, errors, attempts,
    fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms)
SELECT {{uuid}}, {{uuid}}, 'billing', 'shop.tasks.charge',
       JSON_ARRAY(JSON_OBJECT('order', seq, 'note', REPEAT(MD5(seq), {PAYLOAD_REPEAT}))),
       '{{{{}}}}', '[]', 1, CONCAT(MD5(seq), MD5(seq + 1)), 'succeeded', '{{{{"ok": true}}}}', '["bench"]',
       %s, %s, %s + (seq * %s DIV %s), %s
FROM seq_{{first}}_to_{{last}}
"""
PG_FILL_JOBS = f"""
INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts,
    max_attempts, fence, unique_key, fingerprint, errors, tags, retention_class, created_at,
    finished_at, expires_at)
SELECT gen_random_uuid(), 'billing', 'shop.tasks.charge',
       jsonb_build_array(jsonb_build_object('order', g, 'note', repeat(md5(g::text), {PAYLOAD_REPEAT}))),
       '{{}}', 0, 'succeeded', now(), 1, 3, 1, NULL, md5(g::text) || md5((g + 1)::text), '[]', '[]',
       'standard_30d', now() - interval '31 days', now() - interval '31 days', now() - interval '1 day'
FROM generate_series(%s, %s) AS g
"""
MYSQL_FILL_JOBS = f"""
INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts,
    max_attempts, fence, unique_key, fingerprint, errors, tags, retention_class, created_at,
    finished_at, expires_at)
SELECT {{uuid}}, 'billing', 'shop.tasks.charge',
       JSON_ARRAY(JSON_OBJECT('order', seq, 'note', REPEAT(MD5(seq), {PAYLOAD_REPEAT}))),
       '{{{{}}}}', 0, 'succeeded', UTC_TIMESTAMP(6), 1, 3, 1, NULL, CONCAT(MD5(seq), MD5(seq + 1)), '[]', '[]',
       'standard_30d', UTC_TIMESTAMP(6) - INTERVAL 31 DAY, UTC_TIMESTAMP(6) - INTERVAL 31 DAY,
       UTC_TIMESTAMP(6) - INTERVAL 1 DAY
FROM seq_{{first}}_to_{{last}}
"""


def create_database(database_url):
    """Create the scratch database when it does not exist (PostgreSQL / MySQL)."""
    import environ

    config = environ.Env.db_url_config(database_url)
    name = config["NAME"]
    if config["ENGINE"].endswith("postgresql"):
        import psycopg

        with psycopg.connect(host=config["HOST"], port=config["PORT"] or 5432, user=config["USER"],
                             password=config["PASSWORD"] or None, dbname="postgres", autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                conn.execute(f'CREATE DATABASE "{name}"')
    elif config["ENGINE"].endswith("mysql"):
        import MySQLdb

        conn = MySQLdb.connect(host=config["HOST"], port=int(config["PORT"] or 3306), user=config["USER"],
                               password=config["PASSWORD"] or "")
        conn.cursor().execute(f"CREATE DATABASE IF NOT EXISTS `{name}` CHARACTER SET utf8mb4")
        conn.close()
    else:
        raise SystemExit("archive_bench needs PostgreSQL or MySQL/MariaDB (SQLite has no partitions).")


def setup_django(database_url):
    os.environ["HG_BENCH_DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_headgate"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def execute(sql, params=()):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, list(params))


def server_version():
    """The database server's version string (``SELECT version()``), for the figures."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT version()", [])
        return cursor.fetchone()[0]


def uuid_sql():
    from django.db import connection

    return "UUID()" if connection.features.has_native_uuid_field else "REPLACE(UUID(), '-', '')"


def fill_month(rows, partition):
    """Load ``rows`` expired archive rows into ``partition``; returns seconds."""
    from django.db import connection

    start = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=partition.start_ms)
    stamp = start.replace(tzinfo=None) if connection.vendor == "mysql" else start
    span = partition.end_ms - partition.start_ms - 1
    started = time.perf_counter()
    for first, last in chunks(rows, CHUNK):
        if connection.vendor == "postgresql":
            execute(PG_FILL_ARCHIVE, [stamp, stamp, partition.start_ms, span, rows, DAY_MS, first, last])
        else:
            execute(MYSQL_FILL_ARCHIVE.format(uuid=uuid_sql(), first=first, last=last),
                    [stamp, stamp, partition.start_ms, span, rows, DAY_MS])
    return time.perf_counter() - started


def settle(partition):
    """Make the freshly loaded month look old: vacuumed, analysed, checkpointed (PostgreSQL)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        execute(f"VACUUM (ANALYZE) {partition.table_name}")
    else:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE TABLE headgate_job_archive", [])
            cursor.fetchall()
    quiesce()


def quiesce(timeout=900.0):
    """Let the server finish background work of earlier steps before a timed one: PostgreSQL a
    CHECKPOINT; MySQL/MariaDB waits until InnoDB has purged the undo history of earlier deletes
    (its purge of millions of delete-marked rows would otherwise compete with the measurement)."""
    import re

    from django.db import connection

    if connection.vendor == "postgresql":
        execute("CHECKPOINT")
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SHOW ENGINE INNODB STATUS", [])
            status = cursor.fetchone()[2]
        match = re.search(r"History list length (\d+)", status)
        if not match or int(match.group(1)) < 1000:
            return
        time.sleep(2)
    log("InnoDB purge still running; measuring anyway")


def count_rows(partition):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM headgate_job_archive WHERE evicted_at_ms >= %s AND evicted_at_ms < %s",
                       [partition.start_ms, partition.end_ms])
        return cursor.fetchone()[0]


def table_bytes(partition):
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_total_relation_size(%s::regclass)", [partition.table_name])
        else:
            cursor.execute(
                "SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = "
                "DATABASE() AND TABLE_NAME = 'headgate_job_archive' AND PARTITION_NAME = %s",
                [partition.partition_name])
        return int(cursor.fetchone()[0])


def move_to_tablespace(partition, tablespace):
    """PostgreSQL: put the month's child table and its indexes into ``tablespace`` (to separate the
    database's cost from the file system's, e.g. with a tablespace on tmpfs)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = %s::regclass",
                       [partition.table_name])
        indexes = [row[0] for row in cursor.fetchall()]
    execute(f"ALTER TABLE {partition.table_name} SET TABLESPACE {tablespace}")
    for index in indexes:
        execute(f"ALTER INDEX {index} SET TABLESPACE {tablespace}")


def prune_versus_delete(rows, tablespace=None):
    """One size: TRUNCATE through prune_archive_month, then DELETE of the same rows."""
    from django.db import connection

    from django_headgate import prune_archive_month
    from django_headgate.archive.months import prepared_archive_month

    partition = prepared_archive_month(MONTH)
    if tablespace:
        move_to_tablespace(partition, tablespace)
    execute("DELETE FROM headgate_job_archive" if connection.vendor == "mysql" else "TRUNCATE headgate_job_archive")
    log(f"{rows:,} rows: loading month {MONTH}")
    load_seconds = fill_month(rows, partition)
    settle(partition)
    assert count_rows(partition) == rows
    size = table_bytes(partition)
    log(f"{rows:,} rows loaded in {load_seconds:.1f} s ({size / 2**20:,.0f} MiB with indexes); pruning")
    started = time.perf_counter()
    result = prune_archive_month(MONTH)
    prune_seconds = time.perf_counter() - started
    assert result.pruned and count_rows(partition) == 0

    log(f"{rows:,} rows: loading again for the DELETE")
    fill_month(rows, partition)
    settle(partition)
    started = time.perf_counter()
    execute("DELETE FROM headgate_job_archive WHERE evicted_at_ms >= %s AND evicted_at_ms < %s",
            [partition.start_ms, partition.end_ms])
    delete_seconds = time.perf_counter() - started
    vacuum_seconds = None
    if connection.vendor == "postgresql":
        started = time.perf_counter()
        execute(f"VACUUM {partition.table_name}")
        vacuum_seconds = time.perf_counter() - started
    assert count_rows(partition) == 0
    figures = {"rows": rows, "bytes_with_indexes": size, "load_seconds": load_seconds,
               "prune_truncate_seconds": prune_seconds, "delete_seconds": delete_seconds,
               "vacuum_after_delete_seconds": vacuum_seconds,
               "delete_over_prune": delete_seconds / prune_seconds}
    log(f"{rows:,} rows: prune (TRUNCATE) {prune_seconds:.3f} s, DELETE {delete_seconds:.2f} s"
        + (f" + VACUUM {vacuum_seconds:.2f} s" if vacuum_seconds is not None else ""))
    return figures


def fill_jobs(rows):
    from django.db import connection

    for first, last in chunks(rows, CHUNK):
        if connection.vendor == "postgresql":
            execute(PG_FILL_JOBS, [first, last])
        else:
            execute(MYSQL_FILL_JOBS.format(uuid=uuid_sql(), first=first, last=last))


def sweep_throughput(rows, batch):
    """Archive ``rows`` expired jobs through the sweep duty with batch size ``batch``."""
    from django.db import connection
    from django.test.utils import override_settings

    from django_headgate import set_archive_policy
    from django_headgate.conf import get_settings
    from django_headgate.maintenance.retention_sweep import RetentionSweepDuty
    from django_headgate.models import ArchivedJob, Job
    from django_headgate.store import get_store

    execute("DELETE FROM headgate_job")
    execute("DELETE FROM headgate_job_archive" if connection.vendor == "mysql" else "TRUNCATE headgate_job_archive")
    set_archive_policy("billing", timedelta(days=90))
    fill_jobs(rows)
    if connection.vendor == "postgresql":
        execute("VACUUM (ANALYZE) headgate_job")
    quiesce()
    log(f"sweep: {rows:,} expired jobs loaded; sweeping with batch {batch}")
    with override_settings(HEADGATE={"SWEEP": {"BATCH_SIZE": batch}}):
        duty = RetentionSweepDuty(get_store(), get_settings())
        evicted, passes, transactions = 0, 0, 0
        started = time.perf_counter()
        while True:
            outcome = duty.run_once()
            assert not outcome.failed, outcome.error
            passes += 1
            transactions += outcome.batches
            evicted += outcome.rows
            if outcome.rows == 0:
                break
        seconds = time.perf_counter() - started
    archived = ArchivedJob.objects.count()
    assert evicted == rows and archived == rows and not Job.objects.exists()
    figures = {"rows": rows, "batch": batch, "seconds": seconds, "passes": passes,
               "batches": transactions, "archived_per_second": archived / seconds}
    log(f"sweep batch {batch}: {archived:,} archived in {seconds:.2f} s = {archived / seconds:,.0f} rows/s")
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 4_000_000])
    parser.add_argument("--sweep-rows", type=int, default=200_000)
    parser.add_argument("--sweep-batch", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--tablespace", default=None,
                        help="PostgreSQL: keep the pruned month in this tablespace (see docs/benchmarks.md).")
    parser.add_argument("--no-sweep", action="store_true", help="Skip the sweep measurements.")
    parser.add_argument("--out", default=None, help="Write the figures as JSON here.")
    args = parser.parse_args()
    create_database(args.database_url)
    setup_django(args.database_url)
    from django.db import connection

    result = {"vendor": connection.vendor, "server": server_version(), "tablespace": args.tablespace}
    batches = [] if args.no_sweep else args.sweep_batch
    result["sweep"] = [sweep_throughput(args.sweep_rows, batch) for batch in batches]
    result["prune_versus_delete"] = [prune_versus_delete(rows, args.tablespace) for rows in args.rows]
    execute("DELETE FROM headgate_job")
    execute("DELETE FROM headgate_job_archive" if connection.vendor == "mysql" else "TRUNCATE headgate_job_archive")
    if args.out:
        emit(result, args.out)
    for entry in result["prune_versus_delete"]:
        print(f"{connection.vendor} {entry['rows']:>9,} rows: prune {entry['prune_truncate_seconds']:.3f} s, "
              f"DELETE {entry['delete_seconds']:.2f} s"
              + (f" + VACUUM {entry['vacuum_after_delete_seconds']:.2f} s" if entry["vacuum_after_delete_seconds"] is not None else "")
              + f" ({entry['delete_over_prune']:.0f}x)")
    for entry in result["sweep"]:
        print(f"{connection.vendor} sweep batch {entry['batch']:>5}: {entry['archived_per_second']:,.0f} rows archived/s "
              f"({entry['rows']:,} rows, {entry['seconds']:.2f} s, {entry['batches']} transactions)")


if __name__ == "__main__":
    main()
