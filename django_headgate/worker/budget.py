"""The time budget of the worker's own database connections (DESIGN §8a).

Every statement the claim loop and the lease keeper run is bounded by the store's
``statement_budget`` (PostgreSQL ``statement_timeout`` and ``lock_timeout``, MariaDB
``max_statement_time`` and the lock wait timeouts, MySQL ``max_execution_time``, SQLite's busy
timeout). It is set per session on the loop's and the keeper's connections (each statement runs
in autocommit, so there is no transaction for ``SET LOCAL`` to scope), set again after every
reconnect, and undone when the worker stops, with the store's plan settings for the worker
(``set_worker_plan``) and, given ``idle_transaction_seconds`` (the lease), the bound on a
transaction left idle (``bound_idle_transactions``): a worker frozen in the middle of one of
its transactions gives its row locks back within a lease, so the rescue and the other workers
are not kept from those rows. Job threads' connections are the tasks' own: never touched.
"""

from contextlib import ExitStack

from django.db import DatabaseError


def session_name(role, worker_id):
    """The label of one of a worker's connections in the server's session list: the role first
    (PostgreSQL keeps 63 bytes of an application_name)."""
    return f"headgate {role} {worker_id}"


class TimeBudget:
    """Keeps the budget on the calling thread's connection of ``store``'s alias, and labels that
    connection ``session_name`` (unless the host named it)."""

    def __init__(self, store, statement_seconds, lock_seconds, session_name=None, idle_transaction_seconds=None):
        self._store = store
        self._idle_transaction_seconds = idle_transaction_seconds
        self._session_name = session_name
        self._statement_seconds = statement_seconds
        self._lock_seconds = lock_seconds
        self._raw = None  # the driver connection the budget was set on
        self._budget = ExitStack()  # holds the store's statement_budget while it is set

    def ensure(self):
        """Connect if needed and set the budget on a connection that does not have it yet.
        Raises ``DatabaseError`` when the database cannot be reached."""
        connection = self._store.connection
        connection.ensure_connection()
        if connection.connection is not self._raw:
            self._budget.close()  # set on a connection that is gone: nothing to undo
            if not self._store.transaction_pooled:
                # Under transaction pooling no session setting survives a transaction, and this
                # budget would span many: none is kept (HEADGATE["POOLING"]).
                self._budget.enter_context(
                    self._store.statement_budget(self._statement_seconds, lock_seconds=self._lock_seconds))
            self._store.set_worker_plan()
            if self._idle_transaction_seconds is not None:
                self._store.bound_idle_transactions(self._idle_transaction_seconds)
            if self._session_name:
                self._store.name_session(self._session_name)
            self._raw = connection.connection

    def clear(self):
        """Undo the budget if this thread's connection still has it; never raises."""
        connection = self._store.connection
        try:
            if self._raw is not None and connection.connection is self._raw:
                self._store.reset_worker_plan()
                if self._idle_transaction_seconds is not None:
                    self._store.bound_idle_transactions(None)
            self._budget.close()
        except DatabaseError:
            pass
        self._raw = None
