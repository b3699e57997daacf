"""Admin pages on a large archive: render times of the audit changelist with 1,000,000 rows.

    python -m bench.admin_bench --database-url URL [--rows 1000000] [--jobs 100000]
                                [--runs 10] [--reuse] [--out FILE]

Use a scratch database (created when missing; default name in the URL). The bench migrates it,
empties the archive and the hot table, then bulk-loads ``--rows`` archived jobs with SQL
(PostgreSQL ``generate_series``, MariaDB's sequence engine; 250,000 rows per statement): three
queues, 96% succeeded / 3% dead / 1% cancelled, ~1 KB of JSON payload per row, evicted over four
closed months (2026-07 .. 2026-10). Then ``VACUUM (ANALYZE)`` / ``ANALYZE TABLE``, as autovacuum
would have done long before anyone opens an old month. ``--jobs`` hot jobs are loaded the same
way for the job list (90% finished over the last hour, class ``standard_30d``, 10% available).
``--reuse`` keeps rows loaded by a previous run with the same sizes.

Each page is requested through Django's test client (the full request: middleware, session,
permission checks, queries, template rendering) as a staff user with the view permissions and
without payload permissions; one warm-up request, then ``--runs`` timed requests (median and max
reported), then one more request with the queries captured (how many; whether any is a COUNT
over the archive; whether any reads a payload column). PostgreSQL and MySQL/MariaDB only.
"""

import argparse
import os
import re
import statistics
import time
from datetime import datetime, timezone

from bench.archive_bench import create_database, execute, server_version, uuid_sql
from bench.common import chunks, emit, log

CHUNK = 250_000
DAY_MS = 86_400_000
FIRST_MONTH, LAST_MONTH = "202607", "202610"
PAYLOAD_REPEAT = 30  # 30 x md5 hex: ~1 KB of JSON text in each row's args
PAYLOAD_COLUMN_RE = re.compile(r"""[."`](args|kwargs|result|fingerprint)[."`]""")

PG_FILL_ARCHIVE = f"""
INSERT INTO headgate_job_archive (archive_id, job_id, queue, task, args, kwargs, errors, attempts,
    fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms)
SELECT gen_random_uuid(), gen_random_uuid(), (ARRAY['billing', 'emails', 'reports'])[1 + g %% 3],
       'shop.tasks.charge',
       jsonb_build_array(jsonb_build_object('order', g, 'note', repeat(md5(g::text), {PAYLOAD_REPEAT}))),
       '{{}}', '[]', 1, md5(g::text) || md5((g + 1)::text),
       CASE WHEN g %% 100 = 0 THEN 'cancelled' WHEN g %% 25 = 0 THEN 'dead' ELSE 'succeeded' END,
       '{{"ok": true}}', '["bench"]', %s, %s, %s + (g::bigint * %s / %s), %s
FROM generate_series(%s, %s) AS g
"""
MYSQL_FILL_ARCHIVE = f"""
INSERT INTO headgate_job_archive (archive_id, job_id, queue, task, args, kwargs, errors, attempts,
    fingerprint, terminal_state, result, tags, created_at, finished_at, evicted_at_ms, archive_retention_ms)
SELECT {{uuid}}, {{uuid}}, ELT(1 + seq %% 3, 'billing', 'emails', 'reports'), 'shop.tasks.charge',
       JSON_ARRAY(JSON_OBJECT('order', seq, 'note', REPEAT(MD5(seq), {PAYLOAD_REPEAT}))),
       '{{{{}}}}', '[]', 1, CONCAT(MD5(seq), MD5(seq + 1)),
       CASE WHEN seq %% 100 = 0 THEN 'cancelled' WHEN seq %% 25 = 0 THEN 'dead' ELSE 'succeeded' END,
       '{{{{"ok": true}}}}', '["bench"]', %s, %s, %s + (seq * %s DIV %s), %s
FROM seq_{{first}}_to_{{last}}
"""
PG_FILL_JOBS = f"""
INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts,
    max_attempts, fence, unique_key, fingerprint, errors, tags, retention_class, created_at, finished_at,
    expires_at)
SELECT gen_random_uuid(), (ARRAY['billing', 'emails', 'reports'])[1 + g %% 3], 'shop.tasks.charge',
       jsonb_build_array(jsonb_build_object('order', g, 'note', repeat(md5(g::text), {PAYLOAD_REPEAT}))),
       '{{}}', 0, CASE WHEN g %% 10 = 0 THEN 'available' WHEN g %% 50 = 1 THEN 'dead' ELSE 'succeeded' END,
       now(), 1, 3, 1, NULL, md5(g::text) || md5((g + 1)::text), '[]', '["bench"]', 'standard_30d',
       now() - make_interval(secs => g %% 3600),
       CASE WHEN g %% 10 = 0 THEN NULL ELSE now() - make_interval(secs => g %% 3600) END,
       CASE WHEN g %% 10 = 0 THEN NULL ELSE now() - make_interval(secs => g %% 3600) + interval '30 days' END
FROM generate_series(%s, %s) AS g
"""
MYSQL_FILL_JOBS = f"""
INSERT INTO headgate_job (id, queue, task, args, kwargs, priority, state, run_at, attempts,
    max_attempts, fence, unique_key, fingerprint, errors, tags, retention_class, created_at, finished_at,
    expires_at)
SELECT {{uuid}}, ELT(1 + seq %% 3, 'billing', 'emails', 'reports'), 'shop.tasks.charge',
       JSON_ARRAY(JSON_OBJECT('order', seq, 'note', REPEAT(MD5(seq), {PAYLOAD_REPEAT}))),
       '{{{{}}}}', 0, CASE WHEN seq %% 10 = 0 THEN 'available' WHEN seq %% 50 = 1 THEN 'dead' ELSE 'succeeded' END,
       UTC_TIMESTAMP(6), 1, 3, 1, NULL, CONCAT(MD5(seq), MD5(seq + 1)), '[]', '["bench"]', 'standard_30d',
       UTC_TIMESTAMP(6) - INTERVAL (seq %% 3600) SECOND,
       IF(seq %% 10 = 0, NULL, UTC_TIMESTAMP(6) - INTERVAL (seq %% 3600) SECOND),
       IF(seq %% 10 = 0, NULL, UTC_TIMESTAMP(6) - INTERVAL (seq %% 3600) SECOND + INTERVAL 30 DAY)
FROM seq_{{first}}_to_{{last}}
"""


def setup_django(database_url):
    create_database(database_url)
    os.environ["HG_BENCH_DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_admin"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def row_counts():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT (SELECT count(*) FROM headgate_job_archive), (SELECT count(*) FROM headgate_job)", [])
        return cursor.fetchone()


def load_rows(rows, jobs):
    """Empty both tables and bulk-load ``rows`` archived and ``jobs`` hot jobs; returns seconds."""
    from django.db import connection

    from django_headgate.archive.months import prepared_archive_month

    first, last = prepared_archive_month(FIRST_MONTH), prepared_archive_month(LAST_MONTH)
    start_ms, span = first.start_ms, last.end_ms - first.start_ms - 1
    stamp = datetime(2026, 7, 1, tzinfo=timezone.utc)
    stamp = stamp.replace(tzinfo=None) if connection.vendor == "mysql" else stamp
    started = time.perf_counter()
    execute("DELETE FROM headgate_job")
    execute("DELETE FROM headgate_job_archive" if connection.vendor == "mysql" else "TRUNCATE headgate_job_archive")
    for low, high in chunks(rows, CHUNK):
        params = [stamp, stamp, start_ms, span, rows, 90 * DAY_MS]
        if connection.vendor == "postgresql":
            execute(PG_FILL_ARCHIVE, params + [low, high])
        else:
            execute(MYSQL_FILL_ARCHIVE.format(uuid=uuid_sql(), first=low, last=high), params)
        log(f"archive: {high:,} / {rows:,} rows")
    for low, high in chunks(jobs, CHUNK):
        if connection.vendor == "postgresql":
            execute(PG_FILL_JOBS, [low, high])
        else:
            execute(MYSQL_FILL_JOBS.format(uuid=uuid_sql(), first=low, last=high))
    return time.perf_counter() - started


def settle():
    """Statistics and visibility map as autovacuum would leave them (the estimates come from them)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        execute("VACUUM (ANALYZE) headgate_job_archive")
        execute("VACUUM (ANALYZE) headgate_job")
    else:
        for table in ("headgate_job_archive", "headgate_job"):
            with connection.cursor() as cursor:
                cursor.execute(f"ANALYZE TABLE {table}", [])
                cursor.fetchall()


def auditor_client():
    """A logged-in staff user with the view permissions and no payload permission."""
    from django.contrib.auth.models import Permission, User
    from django.test import Client

    user, _ = User.objects.get_or_create(username="bench-auditor", defaults={"is_staff": True})
    user.user_permissions.set(Permission.objects.filter(
        content_type__app_label="headgate", codename__in=["view_job", "view_archivedjob"]))
    client = Client()
    client.force_login(user)
    return client


def measure(client, name, url, params, runs):
    """Warm-up, ``runs`` timed requests, then one with its queries captured."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    response = client.get(url, params)
    assert response.status_code == 200, (name, response.status_code)
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(url, params)
        seconds.append(time.perf_counter() - started)
        assert response.status_code == 200, (name, response.status_code)
    with CaptureQueriesContext(connection) as captured:
        client.get(url, params)
    archive_sql = [q["sql"] for q in captured.captured_queries if "headgate_job_archive" in q["sql"]]
    figures = {
        "page": name, "params": params, "runs": runs,
        "median_ms": statistics.median(seconds) * 1000, "max_ms": max(seconds) * 1000,
        "queries": len(captured.captured_queries),
        "archive_counts": sum("COUNT(" in sql.upper() for sql in archive_sql),
        "payload_columns_read": sum(bool(PAYLOAD_COLUMN_RE.search(sql)) for sql in archive_sql),
        "rows_shown": len(response.context["cl"].result_list) if response.context and "cl" in response.context else None,
    }
    log(f"{name:<34} median {figures['median_ms']:7.1f} ms  max {figures['max_ms']:7.1f} ms  "
        f"{figures['queries']} queries")
    return figures


def pages(rows_present):
    """(name, URL, params) of every page measured."""
    from django.urls import reverse

    from django_headgate.models import ArchivedJob

    archive = reverse("admin:headgate_archivedjob_changelist")
    sample = ArchivedJob.objects.only("archive_id", "job_id").filter(queue="reports").order_by("-evicted_at_ms")[
        rows_present // 6:rows_present // 6 + 1].get()
    return [
        ("archive list", archive, {}),
        ("archive list, queue=emails", archive, {"queue": "emails"}),
        ("archive list, month=2026-08", archive, {"month": "202608"}),
        ("archive list, state=cancelled (1%)", archive, {"terminal_state": "cancelled"}),
        ("archive list, queue+state=dead", archive, {"queue": "reports", "terminal_state": "dead"}),
        ("archive list, page 20", archive, {"p": "20"}),
        ("archive search by job id", archive, {"q": str(sample.job_id)}),
        ("archived job detail", reverse("admin:headgate_archivedjob_change", args=[sample.pk]), {}),
        ("job list", reverse("admin:headgate_job_changelist"), {}),
        ("job list, queue=emails, state=dead", reverse("admin:headgate_job_changelist"),
         {"queue": "emails", "state": "dead"}),
        ("dashboard", reverse("admin:headgate_dashboard"), {}),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/hgbench_admin")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--reuse", action="store_true", help="Keep rows loaded by a previous run of the same sizes.")
    parser.add_argument("--out", default=None, help="Write the figures as JSON here.")
    args = parser.parse_args()
    setup_django(args.database_url)
    from django.db import connection

    if connection.vendor not in ("postgresql", "mysql"):
        raise SystemExit("admin_bench needs PostgreSQL or MySQL/MariaDB.")
    load_seconds = None
    if not (args.reuse and row_counts() == (args.rows, args.jobs)):
        load_seconds = load_rows(args.rows, args.jobs)
        log(f"loaded {args.rows:,} archived and {args.jobs:,} hot jobs in {load_seconds:.1f} s")
    settle()
    assert row_counts() == (args.rows, args.jobs)
    version = server_version()
    client = auditor_client()
    figures = [measure(client, name, url, params, args.runs) for name, url, params in pages(args.rows)]
    result = {"vendor": connection.vendor, "server": version, "archived_rows": args.rows,
              "hot_jobs": args.jobs, "load_seconds": load_seconds, "pages": figures}
    if args.out:
        emit(result, args.out)
    print(f"{connection.vendor} ({version.split(',')[0]}): {args.rows:,} archived rows, {args.jobs:,} hot jobs, "
          f"median of {args.runs} requests")
    for entry in figures:
        print(f"  {entry['page']:<38} {entry['median_ms']:7.1f} ms (max {entry['max_ms']:7.1f})  "
              f"{entry['queries']:2d} queries, {entry['archive_counts']} COUNT over the archive, "
              f"{entry['payload_columns_read']} payload reads")


if __name__ == "__main__":
    main()
