"""PostgreSQL: the worker's and enqueue's hot statements, run on a psycopg server-binding cursor
of the driver connection and prepared server-side (``HEADGATE["PREPARED_STATEMENTS"]``).

Django's psycopg cursor binds client-side: values are quoted into the SQL text, so the server
parses and plans every statement anew (about 1 ms for the ack-and-claim statement) and nothing
can be prepared. Here the text is constant and values travel apart; with ``prepare=True``
psycopg prepares the statement once per connection and then only executes it. Django opens
connections with ``prepare_threshold=None`` (preparation off); it is raised to a bound no
statement reaches, so only these statements are prepared, never the host's.

Kept equal to Django's cursor where it matters: connections open (and are health-checked) as
Django opens them, a broken transaction is refused, errors are Django's ``DatabaseError``
classes, statements are logged when Django logs queries (DEBUG, ``CaptureQueriesContext``), and
a connection with an ``execute_wrapper`` installed runs through Django's cursor instead.
"""

import time

import psycopg
from psycopg import pq

from ...conf import prepared_statements_enabled

#: psycopg's automatic preparation after N executions, set where Django left it off: never reached.
NEVER_AUTOMATIC = 2**62


class PostgreSQLHotStatements:
    def hot_fetchall(self, sql, params):
        """Execute one hot statement; return its rows (an empty list when it returns none)."""
        connection = self.connection
        if connection.execute_wrappers:
            with self.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall() if cursor.description else []
        connection.validate_thread_sharing()
        connection.close_if_health_check_failed()
        connection.ensure_connection()
        connection.validate_no_broken_transaction()
        raw = connection.connection
        prepare = prepared_statements_enabled(self.alias)
        if prepare and raw.prepare_threshold is None:
            raw.prepare_threshold = NEVER_AUTOMATIC
        started = time.monotonic() if connection.queries_logged else None
        with connection.wrap_database_errors, psycopg.Cursor(raw) as cursor:
            cursor.execute(sql, params, prepare=prepare)
            # Not ``cursor.description``: it builds a column object per column (about 20 us
            # for the ack-and-claim's 14) on every call.
            rows = cursor.fetchall() if cursor.pgresult.status == pq.ExecStatus.TUPLES_OK else []
        if started is not None:
            connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})
        return rows
