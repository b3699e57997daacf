"""The raw-SQL drain floor on SQLite: the standard library's sqlite3 directly on a table shaped like
``headgate_job`` (same columns and column types as Django gives it, same claim index), one
process, one connection, on a file of its own in WAL mode with ``synchronous=NORMAL`` (as
bench/settings_headgate.py). Run in the project's virtualenv.

    python -m bench.rawsql_sqlite_bench --database-path FILE --out FILE [--drain N]

- drain, claim 50: per 50 jobs one ``BEGIN IMMEDIATE`` transaction of ``UPDATE ... WHERE id IN
  (SELECT id ... ORDER BY priority DESC, run_at LIMIT 50) RETURNING id, fence``, then one fenced
  ``UPDATE ... WHERE state = 'running' AND (id, fence) IN (VALUES ...)`` acknowledging the 50;
- the same claims without acknowledgements (``claim_only_jobs_per_s``).
No task runs. Jobs are loaded by one transaction of INSERTs, then ``ANALYZE``.
"""

import argparse
import sqlite3
import uuid

from bench.common import emit, log, measure_raw_drain, timed

JSON = 'text NOT NULL CHECK (JSON_VALID("{0}"))'
JSON_NULL = 'text NULL CHECK (JSON_VALID("{0}") OR "{0}" IS NULL)'
SQL_CREATE = f"""
CREATE TABLE raw_job (
    id char(32) NOT NULL PRIMARY KEY, queue varchar(64) NOT NULL, task varchar(255) NOT NULL,
    args {JSON.format("args")}, kwargs {JSON.format("kwargs")}, priority smallint NOT NULL,
    state varchar(16) NOT NULL, run_at datetime NOT NULL, attempts integer NOT NULL,
    max_attempts integer NOT NULL, lease_owner varchar(200), lease_expires_at datetime,
    fence bigint NOT NULL, unique_key varchar(255) UNIQUE, fingerprint varchar(64) NOT NULL,
    progress {JSON_NULL.format("progress")}, result {JSON_NULL.format("result")}, output text,
    errors {JSON.format("errors")}, tags {JSON.format("tags")}, retention_class varchar(100) NOT NULL,
    created_at datetime NOT NULL, started_at datetime, finished_at datetime, expires_at datetime
);
CREATE INDEX raw_job_claim_any_idx ON raw_job (state, priority DESC, run_at);
CREATE INDEX raw_job_expires_idx ON raw_job (expires_at);
"""
# Headgate's SQLite store clock: UTC text, as Django stores datetimes.
NOW = "strftime('%Y-%m-%d %H:%M:%f', 'now')"
SQL_INSERT = (f"INSERT INTO raw_job VALUES (?, 'default', 'bench.tasks.noop', '[]', '{{}}', 0, 'available', {NOW}, "
              f"0, 3, NULL, NULL, 0, NULL, ?, NULL, NULL, NULL, '[]', '[]', 'standard_30d', {NOW}, NULL, NULL, NULL)")
FINGERPRINT = "0" * 64
SQL_CLAIM = f"""
UPDATE raw_job SET state = 'running', attempts = attempts + 1, fence = fence + 1, lease_owner = 'raw',
    lease_expires_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '+30 seconds'), started_at = {NOW}
WHERE id IN (SELECT id FROM raw_job WHERE state = 'available' AND run_at <= {NOW}
             ORDER BY priority DESC, run_at LIMIT ?)
RETURNING id, fence
"""
SQL_ACK = (f"UPDATE raw_job SET state = 'succeeded', finished_at = {NOW}, lease_owner = NULL, lease_expires_at = NULL "
           "WHERE state = 'running' AND (id, fence) IN (VALUES {pairs})")


def connect(path):
    connection = sqlite3.connect(path, isolation_level=None, timeout=30)  # autocommit; BEGIN is ours
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    return connection


def insert_many(connection, count):
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # as Headgate's clear_jobs
    connection.execute("BEGIN IMMEDIATE")
    connection.executemany(SQL_INSERT, ((uuid.uuid4().hex, FINGERPRINT) for _ in range(count)))
    connection.execute("COMMIT")


def drain(connection, batch, acknowledge):
    """Claim (and acknowledge) until no job is left; return (jobs, seconds)."""
    done = 0

    def run():
        nonlocal done
        while True:
            connection.execute("BEGIN IMMEDIATE")
            rows = connection.execute(SQL_CLAIM, [batch]).fetchall()
            connection.execute("COMMIT")
            if not rows:
                return
            done += len(rows)
            if acknowledge:
                params = [value for row in rows for value in row]
                connection.execute(SQL_ACK.format(pairs=", ".join(["(?, ?)"] * len(rows))), params)

    _, seconds = timed(run)
    return done, seconds


def measure_drain(connection, count, batch):
    return measure_raw_drain(connection.execute, lambda n: insert_many(connection, n),
                             lambda size, acknowledge: drain(connection, size, acknowledge),
                             count, batch, "ANALYZE raw_job", empty_sql="DELETE FROM raw_job")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-path", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--drain", type=int, default=10000)
    args = parser.parse_args()
    connection = connect(args.database_path)
    try:
        connection.executescript(SQL_CREATE)
        log(f"raw SQL (SQLite {sqlite3.sqlite_version}): drain {args.drain} jobs claiming 50 per statement")
        result = {"system": "raw-sql-sqlite", "vendor": "sqlite", "server": sqlite3.sqlite_version,
                  "drain_claim_50": measure_drain(connection, args.drain, 50)}
    finally:
        connection.close()
    emit(result, args.out)


if __name__ == "__main__":
    main()
