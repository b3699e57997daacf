"""Extending the archive horizon: time to prepare 24 months, and to move N rows out of the edge.

    python -m bench.archive_horizon_bench --database-url URL [--rows 100000 1000000] [--out FILE]

Use a scratch database (created when missing). PostgreSQL and MySQL/MariaDB only. For each case
the bench re-creates the archive in its frozen layout (``migrate headgate zero`` then
``migrate``), so every run starts from 2025-01 .. 2031-12 and the ``after_2031`` edge:

1. empty edge: ``extend_horizon("203312")`` (24 months, the edge replaced) is timed;
2. for each ``--rows`` N: N archived rows (~1 KB JSON payload each, as bench/archive_bench.py
   loads them) are bulk-loaded into the edge, spread evenly over 2032-01 .. 2033-12, the table is
   analysed, then ``extend_horizon("203312")`` is timed: on PostgreSQL the DDL transaction plus the
   batched move (5,000 rows per transaction), on MySQL/MariaDB the one REORGANIZE statement.
   Afterwards every row is checked to be in its month.
"""

import argparse
import time

from bench.archive_bench import (count_rows, create_database, execute, fill_month, server_version, settle,
                                 setup_django)
from bench.common import emit


def reset_archive():
    from django.core.management import call_command

    from django_headgate.store.archive_layout import forget_prepared_layout

    call_command("migrate", "headgate", "0001", verbosity=0)
    call_command("migrate", "headgate", verbosity=0)
    forget_prepared_layout()


def edge_span():
    from django_headgate.store.archive_layout import AFTER_EDGE, ArchivePartition, month_start_ms

    return ArchivePartition("after_2031", AFTER_EDGE.table_name, AFTER_EDGE.partition_name,
                            AFTER_EDGE.start_ms, month_start_ms(2034, 1) - 1)


def timed_extension():
    from django_headgate.archive.horizon import extend_horizon

    started = time.perf_counter()
    run = extend_horizon("203312")
    return time.perf_counter() - started, run


def extension_case(rows):
    from django_headgate.store.archive_layout import AFTER_EDGE

    reset_archive()
    fill_seconds = fill_month(rows, edge_span()) if rows else 0.0
    if rows:
        settle(AFTER_EDGE)
    seconds, run = timed_extension()
    total = count_rows(edge_span())
    assert total == rows, (total, rows)
    return {"rows": rows, "months_created": len(run.created), "moved_rows": run.moved_rows,
            "fill_seconds": round(fill_seconds, 2), "extend_seconds": round(seconds, 3),
            "rows_per_second": round(rows / seconds) if rows else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--out", default=None, help="Write the figures as JSON here.")
    args = parser.parse_args()
    create_database(args.database_url)
    setup_django(args.database_url)
    from django.db import connection

    result = {"vendor": connection.vendor, "server": server_version(),
              "cases": [extension_case(rows) for rows in [0, *args.rows]]}
    reset_archive()
    execute("DELETE FROM headgate_job")
    if args.out:
        emit(result, args.out)
    for case in result["cases"]:
        print(f"{connection.vendor} extend by {case['months_created']} months with {case['rows']:>9,} edge rows: "
              f"{case['extend_seconds']:.3f} s"
              + (f" ({case['rows_per_second']:,} rows/s moved)" if case["rows"] else ""))


if __name__ == "__main__":
    main()
