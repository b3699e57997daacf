"""The time budget of the worker's own database connections (DESIGN §8a).

Every statement the claim loop and the lease keeper run is bounded: PostgreSQL
``statement_timeout`` and ``lock_timeout``, MariaDB ``max_statement_time`` and
``innodb_lock_wait_timeout`` (MySQL ``max_execution_time``), SQLite's busy timeout. They are
set per session on the loop's and the keeper's connections (each statement runs in autocommit,
so there is no transaction for ``SET LOCAL`` to scope), set again after every reconnect, and
undone when the worker stops. Job threads' connections are the tasks' own: never touched.
"""


def session_name(role, worker_id):
    """The label of one of a worker's connections in the server's session list: the role first
    (PostgreSQL keeps 63 bytes of an application_name)."""
    return f"headgate {role} {worker_id}"


class TimeBudget:
    """Keeps the budget on the calling thread's connection of ``store``'s alias, and labels that
    connection ``session_name`` (unless the host named it)."""

    def __init__(self, store, statement_seconds, lock_seconds, session_name=None):
        self._store = store
        self._session_name = session_name
        self._statement_seconds = statement_seconds
        self._lock_seconds = lock_seconds
        self._raw = None  # the driver connection the budget was set on
        self._previous = None

    def ensure(self):
        """Connect if needed and set the budget on a connection that does not have it yet.
        Raises ``DatabaseError`` when the database cannot be reached."""
        connection = self._store.connection
        connection.ensure_connection()
        if connection.connection is not self._raw:
            self._previous = self._store.set_worker_time_budget(self._statement_seconds, self._lock_seconds)
            if self._session_name:
                self._store.name_session(self._session_name)
            self._raw = connection.connection

    def clear(self):
        """Undo the budget if this thread's connection still has it; never raises."""
        from django.db import DatabaseError

        connection = self._store.connection
        if self._raw is not None and connection.connection is self._raw:
            try:
                self._store.clear_worker_time_budget(self._previous)
            except DatabaseError:
                pass
        self._raw = None
