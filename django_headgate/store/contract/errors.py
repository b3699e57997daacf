"""Store contract, errors section: what kind of error a ``DatabaseError`` is, told by the vendor's
code (``store.errors.database_error_code``), never by its text. Each vendor's codes are in its
package's ``errors.py``; the worker, the maintenance duties and the status reads all ask the
store, so there is one classification.

The kinds decide what a caller does next:

- *connection* (:meth:`is_connection_error`): the connection is gone or unusable: reconnect,
  then retry everything;
- *permanent* (:meth:`is_permanent_error`): this row's data can never be written as it is;
- *budget exceeded* (:meth:`is_budget_exceeded`): a statement stopped by ``statement_budget``
  (its run time or its lock wait ran out): a duty's batch is run again smaller;
- *deadlock* (:meth:`is_deadlock`): the database broke a deadlock by rolling this transaction back;
- *contention* (:meth:`is_contention`): a budget exceeded, a deadlock, or another give-up while
  waiting for another transaction (a serialization failure; SQLite's busy database). Nothing is
  wrong with the row or the connection: a worker's write waits for a later round without
  spending a try, and a claim backs off;
- *unique violation* (:meth:`is_unique_violation`): a duplicate key.

Anything else is retried later, a bounded number of times.
"""

from ..errors import is_data_error
from . import vendor_supplies


class ErrorsContract:
    @vendor_supplies
    def is_unique_violation(self, exc):
        """True when the IntegrityError ``exc`` is a duplicate key (by the driver's error code)."""

    @vendor_supplies
    def is_connection_error(self, exc):
        """True when the connection itself failed (``store.errors.connection_failed``, with the
        vendor's codes of a connection that ended)."""

    @vendor_supplies
    def is_contention(self, exc):
        """True when the statement gave up waiting for another transaction: every error of
        :meth:`is_budget_exceeded` and :meth:`is_deadlock`, and the vendor's other such codes."""

    def is_permanent_error(self, exc):
        """True when retrying the same write cannot succeed (the row's data is the problem).
        Default: ``DataError``, ``IntegrityError``, ``NotSupportedError``."""
        return is_data_error(exc)

    def is_deadlock(self, exc):
        """True when the DatabaseError ``exc`` is a deadlock the database broke by rolling the
        transaction back (by error code). Default: never (SQLite serialises writers)."""
        return False

    def is_budget_exceeded(self, exc):
        """True when the DatabaseError ``exc`` is a statement stopped by ``statement_budget``
        (its time or its lock wait ran out), by error code. Default: never (SQLite has no
        statement timeout)."""
        return False
