"""Bulk-insert expired terminal jobs in one statement per vendor (for the large sweep test and
the benchmarks): N rows alternating between two queues, finished 31 days ago, expired a day ago."""

from django.db import connection

COLUMNS = (
    "id, queue, task, args, kwargs, priority, state, run_at, attempts, max_attempts, fence, "
    "unique_key, fingerprint, errors, tags, retention_class, created_at, finished_at, expires_at"
)

POSTGRESQL = f"""
INSERT INTO headgate_job ({COLUMNS})
SELECT gen_random_uuid(), CASE WHEN g %% 2 = 0 THEN %s ELSE %s END, 'tests.testapp.tasks.noop',
       %s::jsonb, '{{}}', 0, 'succeeded', now(), 1, 3, 1, NULL, md5(g::text), '[]', '[]', 'standard_30d',
       now() - interval '31 days', now() - interval '31 days', now() - interval '1 day'
FROM generate_series(1, %s) AS g
"""
MYSQL = f"""
INSERT INTO headgate_job ({COLUMNS})
SELECT {{uuid}}, CASE WHEN seq %% 2 = 0 THEN %s ELSE %s END, 'tests.testapp.tasks.noop',
       %s, '{{{{}}}}', 0, 'succeeded', UTC_TIMESTAMP(6), 1, 3, 1, NULL, MD5(seq), '[]', '[]', 'standard_30d',
       UTC_TIMESTAMP(6) - INTERVAL 31 DAY, UTC_TIMESTAMP(6) - INTERVAL 31 DAY, UTC_TIMESTAMP(6) - INTERVAL 1 DAY
FROM seq_1_to_{{count}}
"""
SQLITE_TIME = "strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now', '{shift}')"
SQLITE = f"""
WITH RECURSIVE seq(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM seq WHERE g < %s)
INSERT INTO headgate_job ({COLUMNS})
SELECT lower(hex(randomblob(16))), CASE WHEN g %% 2 = 0 THEN %s ELSE %s END, 'tests.testapp.tasks.noop',
       %s, '{{}}', 0, 'succeeded', {SQLITE_TIME.format(shift='+0 seconds')}, 1, 3, 1, NULL, hex(g), '[]', '[]',
       'standard_30d', {SQLITE_TIME.format(shift='-31 days')}, {SQLITE_TIME.format(shift='-31 days')},
       {SQLITE_TIME.format(shift='-1 days')}
FROM seq
"""


def insert_expired_jobs(count, even_queue, odd_queue, args_json="[]", using=connection):
    """Insert ``count`` expired succeeded jobs: even rows on ``even_queue``, odd on ``odd_queue``."""
    with using.cursor() as cursor:
        if using.vendor == "postgresql":
            cursor.execute(POSTGRESQL, [even_queue, odd_queue, args_json, count])
        elif using.vendor == "mysql":
            uuid = "UUID()" if using.features.has_native_uuid_field else "REPLACE(UUID(), '-', '')"
            cursor.execute(MYSQL.format(uuid=uuid, count=int(count)), [even_queue, odd_queue, args_json])
        else:
            cursor.execute(SQLITE, [count, even_queue, odd_queue, args_json])
