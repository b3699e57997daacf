"""Store contract, samples section: the ``dashboard_sample`` duty's writes (one row per queue
per sample in ``headgate_queue_sample``) and their prune. One shape fits every vendor
(``store/sample_statements.py``); the dashboard reads the rows through the ORM."""

from dataclasses import dataclass
from datetime import timedelta

from . import runs
from ..fragments import placeholders

#: A sample's window of finished jobs reaches back at most this far (the previous sample, or the
#: maintainer's start after a long stop): older finishes are not counted, rather than counted in
#: the wrong hour.
LONGEST_WINDOW = timedelta(hours=1)


@dataclass
class QueueSampleRow:
    """One queue's row of a sample (the columns of ``headgate_queue_sample``)."""

    queue: str
    available: int = 0
    scheduled: int = 0
    running: int = 0
    held_back: int = 0
    succeeded: int = 0
    retried: int = 0
    dead: int = 0


class SamplesContract:
    @runs("SQL_LAST_SAMPLE_AT", "SQL_INSERT_QUEUE_SAMPLE")
    def take_queue_sample(self, now):
        """Sample every queue at store-clock ``now``: its live jobs and the jobs that finished
        since the previous sample (at most :data:`LONGEST_WINDOW` back). Writes one row per queue
        that has live jobs or finished ones, none when there is nothing; returns the rows written.

        Counting the finished jobs here, rather than when a worker acknowledges them, keeps the
        worker's hot path free of a shared counter row; jobs the retention sweep removed before
        the sample, and jobs of a class that never expires, are not counted (docs/operations.md)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_LAST_SAMPLE_AT, [])
            previous = self.from_db_datetime(cursor.fetchone()[0])
        since = now - LONGEST_WINDOW if previous is None else max(previous, now - LONGEST_WINDOW)
        rows = self.sample_queue_depths(now)
        for queue, state, jobs, retried in self.count_finished_outcomes(since, now):
            row = rows.setdefault(queue, QueueSampleRow(queue))
            setattr(row, state, getattr(row, state) + jobs)
            row.retried += retried
        at = self.db_datetime(now)
        values = [[at, row.queue, row.available, row.scheduled, row.running, row.held_back,
                   row.succeeded, row.retried, row.dead] for row in rows.values()]
        if values:
            with self.atomic(), self.cursor() as cursor:
                cursor.executemany(self.sql.SQL_INSERT_QUEUE_SAMPLE, values)
        return len(values)

    @runs("SQL_SAMPLE_QUEUE_DEPTHS")
    def sample_queue_depths(self, now):
        """``{queue: QueueSampleRow}`` with the live jobs of every queue at store-clock ``now``
        (ready and scheduled apart), read through the claim index."""
        at = self.db_datetime(now)
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SAMPLE_QUEUE_DEPTHS, [at, at])
            return {queue: QueueSampleRow(queue, *(int(n or 0) for n in counts))
                    for queue, *counts in cursor.fetchall()}

    @runs("SQL_EXPIRING_RETENTION_CLASSES", "SQL_COUNT_FINISHED_OUTCOMES")
    def count_finished_outcomes(self, since, until):
        """``[(queue, "succeeded" or "dead", jobs, retried attempts)]`` for the jobs that
        finished in ``(since, until]``: one range of the expiry index per retention class that
        expires (a class without expiry cannot be found this way and is left out)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_EXPIRING_RETENTION_CLASSES, [])
            classes = [(key, self.from_db_duration(duration)) for key, duration in cursor.fetchall()]
            counts = []
            for key, duration in classes:
                cursor.execute(self.sql.SQL_COUNT_FINISHED_OUTCOMES, [
                    self.db_datetime(since + duration), self.db_datetime(until + duration), key,
                    self.db_datetime(since), self.db_datetime(until)])
                counts += [(queue, state, int(jobs), int(retried or 0))
                           for queue, state, jobs, retried in cursor.fetchall()]
        return counts

    @runs("SQL_SELECT_OLD_SAMPLES", "SQL_DELETE_SAMPLES")
    def prune_queue_samples(self, before, limit):
        """Delete at most ``limit`` samples taken before ``before``, oldest first (select then
        delete by primary key, one transaction). Returns the rows deleted. Callers hold the
        ``dashboard_sample`` duty's singleton lock, so no one else deletes these rows."""
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SELECT_OLD_SAMPLES, [self.db_datetime(before), limit])
            ids = [row[0] for row in cursor.fetchall()]
            if not ids:
                return 0
            cursor.execute(self.sql.SQL_DELETE_SAMPLES.format(ids=placeholders(len(ids))), ids)
            return cursor.rowcount

    @staticmethod
    def from_db_duration(value):
        """A duration column's driver value as a timedelta (PostgreSQL returns one; MySQL and
        SQLite store microseconds)."""
        return value if isinstance(value, timedelta) else timedelta(microseconds=int(value))
