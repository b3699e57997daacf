"""Store contract, compliance section (DESIGN §18): legal holds as the archive prune sees them.

The sweep's own hold test is part of its eligibility (``fragments.SWEEP_ELIGIBLE``); here are the
operations of a month's prune (count and move the held rows of a partition into
``headgate_job_archive_held``) and the clean-up after a release.
"""

import json
import uuid

from ..fragments import placeholders
from . import runs

#: The tables an erasure walks, by the name the caller gives (a closed set).
ERASABLE_TABLES = {"job": "JOB", "archive": "ARCHIVE", "held": "HELD"}
#: The cursor before every key (the all-zero UUID is the least in every vendor's order).
NIL_UUID = uuid.UUID(int=0)


class ComplianceContract:
    @runs("SQL_COUNT_HELD_ARCHIVE_ROWS")
    def count_held_archive_rows(self, partition):
        """How many rows of the archive ``partition`` an unreleased legal hold covers (reads the
        partition's rows: call it inside :meth:`archive_partition_locked` before a prune)."""
        sql, params = self.partition_statement(self.sql.SQL_COUNT_HELD_ARCHIVE_ROWS, partition)
        with self.cursor() as cursor:
            cursor.execute(sql, params)
            return int(cursor.fetchone()[0])

    @runs("SQL_MOVE_HELD_ARCHIVE_ROWS")
    def move_held_archive_rows(self, partition):
        """Copy the held rows of ``partition`` into ``headgate_job_archive_held`` (a row already
        there, from a move interrupted before its TRUNCATE, is kept as it is); return the rows
        copied. Call it inside :meth:`archive_partition_locked`, right before
        :meth:`truncate_archive_partition`: PostgreSQL and SQLite commit both together; on
        MySQL/MariaDB the copy commits under the same table lock, before the TRUNCATE DDL."""
        sql, params = self.partition_statement(self.sql.SQL_MOVE_HELD_ARCHIVE_ROWS, partition)
        with self.cursor() as cursor:
            cursor.execute(sql, params)
            return max(cursor.rowcount, 0)

    @runs("SQL_SELECT_RELEASED_HELD_ROWS", "SQL_DELETE_HELD_ROWS")
    def delete_released_held_rows(self, limit):
        """Delete up to ``limit`` rows of ``headgate_job_archive_held`` that no unreleased hold
        covers any more, in one transaction; return how many."""
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SELECT_RELEASED_HELD_ROWS, [limit])
            ids = [row[0] for row in cursor.fetchall()]
            if not ids:
                return 0
            cursor.execute(self.sql.SQL_DELETE_HELD_ROWS.format(ids=placeholders(len(ids))), ids)
            return cursor.rowcount

    # -- erasure by tag -----------------------------------------------------------------------

    @runs("SQL_SELECT_ERASABLE_JOB", "SQL_SELECT_ERASABLE_ARCHIVE", "SQL_SELECT_ERASABLE_HELD")
    def select_erasable_rows(self, table, tag, after, limit):
        """Up to ``limit`` rows of ``table`` ("job": terminal hot rows; "archive": every archive
        partition; "held": the held table) carrying ``tag``, with a first key column above
        ``after`` (a UUID, or None from the start), in key order: ``[(key values, errors list)]``.
        Reads only; the caller blanks them with :meth:`blank_erasable_rows`."""
        statement = getattr(self.sql, f"SQL_SELECT_ERASABLE_{ERASABLE_TABLES[table]}")
        with self.cursor() as cursor:
            cursor.execute(statement, [tag, self.db_uuid(after or NIL_UUID), limit])
            rows = cursor.fetchall()
        return _keyed(rows)

    @runs("SQL_BLANK_JOB", "SQL_BLANK_ARCHIVE", "SQL_BLANK_HELD")
    def blank_erasable_rows(self, table, rows):
        """Blank the payloads of ``rows`` (``[(key values, errors list)]`` as selected, errors
        already stripped of their texts) of ``table``: args, kwargs and result (hot rows: output
        and progress too) and errors replaced; ids, task, queue, times, states and tags kept."""
        statement = getattr(self.sql, f"SQL_BLANK_{ERASABLE_TABLES[table]}")
        with self.cursor() as cursor:
            cursor.executemany(statement, [["[]", "{}", json.dumps(errors), *keys] for keys, errors in rows])

    @runs("SQL_COUNT_HELD_TAGGED")
    def count_held_tagged_rows(self, tag):
        """Rows carrying ``tag`` that an unreleased legal hold covers (hot, archive and held)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_COUNT_HELD_TAGGED, [tag, tag, tag])
            return int(cursor.fetchone()[0])

    @runs("SQL_SELECT_UNFINISHED_TAGGED")
    def select_unfinished_tagged_jobs(self, tag, limit):
        """Ids (UUIDs) of up to ``limit`` hot rows carrying ``tag`` that wait or run (an erasure
        blanks them once they end)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SELECT_UNFINISHED_TAGGED, [tag, limit])
            return [self.from_db_uuid(row[0]) for row in cursor.fetchall()]

    @runs("SQL_SELECT_ENDED_JOBS", "SQL_SELECT_PRESENT_JOBS", "SQL_SELECT_ARCHIVED_COPIES")
    def select_ended_rows(self, job_ids):
        """For jobs an erasure waited for: ``(ended hot rows, archived copies of the jobs no longer
        in the hot table, ids still running or waiting)``; the rows as :meth:`select_erasable_rows`
        returns them, for :meth:`blank_erasable_rows` ("job" and "archive")."""
        if not job_ids:
            return [], [], []
        ids = [self.db_uuid(job_id) for job_id in job_ids]
        marks = placeholders(len(ids))
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SELECT_ENDED_JOBS.format(ids=marks), ids)
            ended = cursor.fetchall()
            cursor.execute(self.sql.SQL_SELECT_PRESENT_JOBS.format(ids=marks), ids)
            present = {self.from_db_uuid(row[0]) for row in cursor.fetchall()}
            gone = [self.db_uuid(job_id) for job_id in job_ids if job_id not in present]
            copies = []
            if gone:
                cursor.execute(self.sql.SQL_SELECT_ARCHIVED_COPIES.format(ids=placeholders(len(gone))), gone)
                copies = cursor.fetchall()
        ended_ids = {self.from_db_uuid(row[0]) for row in ended}
        waiting = [job_id for job_id in job_ids if job_id in present and job_id not in ended_ids]
        return _keyed(ended), _keyed(copies), waiting

    # -- crypto-shredding -----------------------------------------------------------------------

    @runs("SQL_SELECT_ARCHIVE_MONTH_PAYLOADS")
    def select_archive_month_payloads(self, start_ms, end_ms, after, limit):
        """Up to ``limit`` archived rows with ``start_ms <= evicted_at_ms < end_ms`` after the
        cursor ``after`` (``(evicted_at_ms, archive_id)``, or None from the start), in that order:
        ``[(archive_id, evicted_at_ms, args, kwargs, result, errors)]``, the JSON decoded. Reads
        only; :meth:`update_archive_payloads` writes them back."""
        after_ms, after_id = after or (start_ms - 1, NIL_UUID)
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SELECT_ARCHIVE_MONTH_PAYLOADS,
                           [start_ms, end_ms, after_ms, after_ms, self.db_uuid(after_id), limit])
            rows = cursor.fetchall()
        return [(self.from_db_uuid(row[0]), int(row[1]), *(_json(value) for value in row[2:])) for row in rows]

    @runs("SQL_UPDATE_ARCHIVE_PAYLOADS")
    def update_archive_payloads(self, rows):
        """Rewrite archived rows' payloads: ``rows`` as :meth:`select_archive_month_payloads`
        returns them, with new args, kwargs, result (None: NULL) and errors."""
        with self.cursor() as cursor:
            cursor.executemany(self.sql.SQL_UPDATE_ARCHIVE_PAYLOADS, [
                [json.dumps(args), json.dumps(kwargs), None if result is None else json.dumps(result),
                 json.dumps(errors), self.db_uuid(archive_id), evicted_at_ms]
                for archive_id, evicted_at_ms, args, kwargs, result, errors in rows])

    @runs("SQL_SELECT_HOT_PAYLOADS")
    def select_hot_payloads(self, after, limit):
        """Up to ``limit`` hot rows with an id above ``after`` (None: from
        the start), in id order: ``[(id, state, attempts, task, args, kwargs, result, progress,
        output, errors)]``, the JSON decoded. Reads only (key rotation)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SELECT_HOT_PAYLOADS, [self.db_uuid(after or NIL_UUID), limit])
            rows = cursor.fetchall()
        return [(self.from_db_uuid(row[0]), row[1], row[2], row[3], *(_json(value) for value in row[4:8]),
                 row[8], _json(row[9])) for row in rows]

    @runs("SQL_UPDATE_HOT_PAYLOADS")
    def update_hot_payloads(self, rows):
        """Rewrite hot rows' payloads and fingerprint: ``rows`` as :meth:`select_hot_payloads`
        returns them with new payloads, and the new fingerprint last. A row whose state or
        attempts changed since it was read is left as it is; returns the rows rewritten."""
        changed = 0
        with self.cursor() as cursor:
            for job_id, state, attempts, _task, args, kwargs, result, progress, output, errors, fingerprint in rows:
                cursor.execute(self.sql.SQL_UPDATE_HOT_PAYLOADS, [
                    json.dumps(args), json.dumps(kwargs), _dump_or_none(result), _dump_or_none(progress), output,
                    json.dumps(errors), fingerprint, self.db_uuid(job_id), state, attempts])
                changed += max(cursor.rowcount, 0)
        return changed


def _dump_or_none(value):
    return None if value is None else json.dumps(value)


def _json(value):
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def _keyed(rows):
    """Selected ``(key columns..., errors)`` rows as ``[(key values, errors list)]``."""
    return [(tuple(row[:-1]), json.loads(row[-1]) if isinstance(row[-1], (str, bytes)) else row[-1])
            for row in rows]
