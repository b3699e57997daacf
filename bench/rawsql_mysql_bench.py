"""The raw-SQL drain floor on MariaDB/MySQL: mysqlclient (MySQLdb) directly on a table shaped like
``headgate_job`` (same columns, same claim index), one process, one connection, its own fresh
database. Run in the project's virtualenv (it has mysqlclient).

    python -m bench.rawsql_mysql_bench --database-url mysql://root@127.0.0.1:3306/DB --out FILE

- drain, claim 50: one transaction ``SELECT ... ORDER BY priority DESC, run_at LIMIT 50 FOR UPDATE
  SKIP LOCKED`` + ``UPDATE ... WHERE id IN (...)`` leasing them (there is no UPDATE ... RETURNING),
  then one fenced ``UPDATE ... WHERE (id, fence) IN (...) AND state = 'running'`` acknowledging the
  50 in autocommit;
- the same claims without acknowledgements (``claim_only_jobs_per_s``).
No task runs. Jobs are loaded by multi-row INSERTs of 1,000 rows, then ``ANALYZE TABLE``.
"""

import argparse
import uuid
from urllib.parse import urlsplit

from bench.common import emit, log, measure_raw_drain, timed

SQL_CREATE = """
CREATE TABLE raw_job (
    id uuid PRIMARY KEY, queue varchar(64) NOT NULL, task varchar(255) NOT NULL,
    args json NOT NULL, kwargs json NOT NULL, priority smallint NOT NULL,
    state varchar(16) NOT NULL, run_at datetime(6) NOT NULL, attempts integer NOT NULL,
    max_attempts integer NOT NULL, lease_owner varchar(200), lease_expires_at datetime(6),
    fence bigint NOT NULL, unique_key varchar(255) UNIQUE, fingerprint varchar(64) NOT NULL,
    progress json, result json, output longtext, errors json NOT NULL, tags json NOT NULL,
    retention_class varchar(100) NOT NULL, created_at datetime(6) NOT NULL,
    started_at datetime(6), finished_at datetime(6), expires_at datetime(6),
    KEY raw_job_claim_any_idx (state, priority DESC, run_at),
    KEY raw_job_expires_idx (expires_at)
) ENGINE=InnoDB
"""
NOW = "UTC_TIMESTAMP(6)"
ROW = (f"(%s, 'default', 'bench.tasks.noop', '[]', '{{}}', 0, 'available', {NOW}, 0, 3, NULL, NULL, 0, "
       f"NULL, %s, NULL, NULL, NULL, '[]', '[]', 'standard_30d', {NOW}, NULL, NULL, NULL)")
FINGERPRINT = "0" * 64
INSERT_BATCH_ROWS = 1000
SQL_CLAIM_SELECT = (
    f"SELECT id, fence FROM raw_job WHERE state = 'available' AND run_at <= {NOW} "
    "ORDER BY priority DESC, run_at LIMIT %s FOR UPDATE SKIP LOCKED"
)
SQL_CLAIM_UPDATE = (
    "UPDATE raw_job SET state = 'running', attempts = attempts + 1, fence = fence + 1, lease_owner = 'raw', "
    f"lease_expires_at = {NOW} + INTERVAL 30 SECOND, started_at = {NOW} WHERE id IN ({{ids}})"
)
SQL_ACK = (
    f"UPDATE raw_job SET state = 'succeeded', finished_at = {NOW}, lease_owner = NULL, lease_expires_at = NULL "
    "WHERE (id, fence) IN ({pairs}) AND state = 'running'"
)


def connect(url):
    import MySQLdb

    parts = urlsplit(url)
    return MySQLdb.connect(host=parts.hostname, port=parts.port or 3306, user=parts.username or "root",
                           password=parts.password or "", database=parts.path.lstrip("/"),
                           charset="utf8mb4", autocommit=True)


def insert_many(connection, count):
    cursor = connection.cursor()
    connection.begin()
    for start in range(0, count, INSERT_BATCH_ROWS):
        rows = min(INSERT_BATCH_ROWS, count - start)
        params = []
        for _ in range(rows):
            params += [str(uuid.uuid4()), FINGERPRINT]
        cursor.execute("INSERT INTO raw_job VALUES " + ", ".join([ROW] * rows), params)
    connection.commit()


def drain(connection, batch, acknowledge):
    """Claim (and acknowledge) until no job is left; return (jobs, seconds)."""
    cursor = connection.cursor()
    done = 0

    def run():
        nonlocal done
        while True:
            connection.begin()
            cursor.execute(SQL_CLAIM_SELECT, [batch])
            rows = cursor.fetchall()
            if rows:
                cursor.execute(SQL_CLAIM_UPDATE.format(ids=", ".join(["%s"] * len(rows))), [r[0] for r in rows])
            connection.commit()
            if not rows:
                return
            done += len(rows)
            if acknowledge:  # the claimed fence is the read one + 1
                params = [value for id_, fence in rows for value in (id_, fence + 1)]
                cursor.execute(SQL_ACK.format(pairs=", ".join(["(%s, %s)"] * len(rows))), params)

    _, seconds = timed(run)
    return done, seconds


def measure_drain(connection, count, batch):
    cursor = connection.cursor()

    def execute(sql):
        cursor.execute(sql)
        cursor.fetchall()  # ANALYZE TABLE returns a result set that must be read

    return measure_raw_drain(execute, lambda n: insert_many(connection, n),
                             lambda size, acknowledge: drain(connection, size, acknowledge),
                             count, batch, "ANALYZE TABLE raw_job")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--drain", type=int, default=10000)
    args = parser.parse_args()
    connection = connect(args.database_url)
    try:
        connection.cursor().execute(SQL_CREATE)
        version = connection.get_server_info()
        log(f"raw SQL (MariaDB {version}): drain {args.drain} jobs claiming 50 per statement")
        result = {"system": "raw-sql-mysql", "vendor": "mysql", "server": version,
                  "drain_claim_50": measure_drain(connection, args.drain, 50)}
    finally:
        connection.close()
    emit(result, args.out)


if __name__ == "__main__":
    main()
