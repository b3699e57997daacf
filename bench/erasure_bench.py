"""Erasure throughput: rows blanked per second by ``headgate.erase(tag=...)``.

    python -m bench.erasure_bench --database-url URL [--hot-rows 50000] [--archived-rows 50000]
                                  [--batch 500 2000] [--out FILE]

Use a scratch database (created when missing; PostgreSQL or MySQL/MariaDB): the bench migrates
it and empties the hot table and the archive first. For each ``--batch`` B: ``--hot-rows``
expired succeeded jobs (~1 KB of JSON args each) and ``--archived-rows`` archived jobs in the
closed month 2026-03 are bulk-loaded, all carrying the tag ``subject:bench``; then ``erase()``
is timed, the whole call (held-row check, the keyset walk of the three tables in transactions of
B rows, the record). Reported: rows blanked per second.
"""

import argparse
import time

from bench.archive_bench import MONTH, create_database, execute, fill_jobs, fill_month, server_version, setup_django
from bench.common import emit, log

TAG = "subject:bench"


def erase_throughput(hot_rows, archived_rows, batch):
    from django.conf import settings
    from django.db import connection
    from django.test.utils import override_settings

    from django_headgate.archive.months import prepared_archive_month
    from django_headgate.compliance.erasure import erase
    from django_headgate.models import ArchivedJob, Erasure, Job

    execute("DELETE FROM headgate_job")
    execute("DELETE FROM headgate_job_archive" if connection.vendor == "mysql" else "TRUNCATE headgate_job_archive")
    Erasure.objects.all().delete()
    fill_jobs(hot_rows)
    fill_month(archived_rows, prepared_archive_month(MONTH))
    Job.objects.update(tags=[TAG])
    ArchivedJob.objects.update(tags=[TAG])
    with override_settings(HEADGATE={**settings.HEADGATE, "ERASURE": {"BATCH_SIZE": batch}}):
        started = time.perf_counter()
        record = erase(tag=TAG, reason="benchmark", by="bench")
        seconds = time.perf_counter() - started
    rows = record.counts.get("headgate_job", 0) + record.counts.get("headgate_job_archive", 0)
    log(f"batch {batch}: {rows} rows blanked in {seconds:.2f} s = {rows / seconds:,.0f} rows/s")
    return {"batch": batch, "rows": rows, "seconds": round(seconds, 3), "rows_per_second": round(rows / seconds)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--hot-rows", type=int, default=50_000)
    parser.add_argument("--archived-rows", type=int, default=50_000)
    parser.add_argument("--batch", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--out")
    args = parser.parse_args()
    create_database(args.database_url)
    setup_django(args.database_url)
    results = {"server": server_version(),
               "erasure": [erase_throughput(args.hot_rows, args.archived_rows, batch) for batch in args.batch]}
    if args.out:
        emit(results, args.out)


if __name__ == "__main__":
    main()
