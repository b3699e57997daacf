"""The store contract: what every vendor supplies, shared value conversions and the store clock.

:class:`BaseStore` is assembled from one contract class per section (``contract/jobs.py``,
``contract/operations.py``, ``contract/heartbeats.py``, ``contract/sweep.py``, ``contract/worker.py``,
``contract/flow.py``, ``contract/workflows.py``, ``contract/batches.py``, ``contract/compliance.py``,
``contract/samples.py``,
``contract/errors.py``).
Each section declares

- methods marked :func:`~.contract.vendor_supplies`: the operations a vendor must implement;
- default methods marked :func:`~.contract.runs`: the ``SQL_*`` statements they execute through
  ``self.sql``, which a vendor keeping the default must define.

A vendor class (one that sets ``vendor``) is checked when it is defined: a missing statement or
method raises ``TypeError`` naming it, so an incomplete vendor never imports.

Rules every implementation keeps:
- times come from the database clock (``now()`` / ``UTC_TIMESTAMP(6)`` / ``strftime('now')``);
- every worker write is fenced by ``(id, fence)`` and ``state = 'running'``; a write that matches
  no row raises ``StaleLease`` and changes nothing;
- values are bound parameters; identifiers come from closed sets in this package;
- an error is classified by its code or constraint (``contract/errors.py``), never by message text.
"""

import hashlib
from contextlib import contextmanager, nullcontext
from types import SimpleNamespace

from django.db import DatabaseError, connections, transaction
from django.db.models import UUIDField

from ..conf import transaction_pooled
from ..exceptions import StaleLease
from .contract import contract_gaps, runs, vendor_supplies
from .contract.batches import BatchesContract
from .contract.compliance import ComplianceContract
from .contract.errors import ErrorsContract
from .contract.flow import FlowContract
from .contract.heartbeats import HeartbeatsContract
from .contract.jobs import JobsContract
from .contract.operations import OperationsContract
from .contract.samples import SamplesContract
from .contract.sweep import SweepContract
from .contract.worker import WorkerContract
from .contract.workflows import WorkflowsContract
from .fragments import placeholders  # noqa: F401  (public names of this module)
from .records import ClaimedJob, Completion, NewJob, OperationBatch, SweepBatch  # noqa: F401


def lock_key(name):
    """A stable signed 64-bit key for an advisory lock name (PostgreSQL takes a bigint)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class BaseStore(JobsContract, OperationsContract, HeartbeatsContract, SweepContract, WorkerContract, FlowContract,
                WorkflowsContract, BatchesContract, ComplianceContract, SamplesContract, ErrorsContract):
    """Contract for one database alias. A vendor subclass sets ``vendor`` and ``statements``.

    ``statements`` is a tuple of the vendor's statement modules; their ``SQL_*`` constants are
    gathered into ``self.sql`` (later modules win), so no statement is aliased by hand.
    """

    vendor = None
    statements = ()
    #: Idle workers can be woken by ``LISTEN``/``NOTIFY`` (the worker then waits for a NOTIFY
    #: instead of polling with backoff).
    supports_listen_notify = False
    #: ``archive_row_estimates()`` returns exact counts (True), or catalogue estimates.
    archive_counts_are_exact = False
    #: Bytes of job payload one ``insert_jobs()`` call may carry (None: bounded by rows only);
    #: ``enqueue_many`` splits larger batches before calling the store.
    max_insert_bytes = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "vendor" not in cls.__dict__:
            return
        cls.sql = SimpleNamespace(**{
            name: value for module in cls.statements
            for name, value in vars(module).items() if name.startswith("SQL_")
        })
        statements, methods = contract_gaps(cls, cls.sql)
        gaps = [f"define the statements {', '.join(statements)}"] if statements else []
        gaps += [f"implement {', '.join(methods)}"] if methods else []
        if gaps:
            raise TypeError(f"The store {cls.__name__} must {' and '.join(gaps)}.")

    def __init__(self, alias):
        self.alias = alias
        self._uuid_field = UUIDField()

    @property
    def connection(self):
        return connections[self.alias]

    def cursor(self):
        return self.connection.cursor()

    @property
    def transaction_pooled(self):
        """The alias reaches the server through a transaction-pooling PgBouncer
        (``HEADGATE["POOLING"]``): no session state (``SET``, ``LISTEN``, session advisory locks,
        prepared statements) outlives one transaction, so the store keeps none."""
        return transaction_pooled(self.alias)

    @property
    def wakes_on_notify(self):
        """Idle workers wait for a NOTIFY (else they poll): LISTEN needs a session of its own."""
        return self.supports_listen_notify and not self.transaction_pooled

    def atomic(self):
        return transaction.atomic(using=self.alias)

    # -- value conversion at the driver boundary ---------------------------------------------

    def db_uuid(self, value):
        return self._uuid_field.get_db_prep_value(value, self.connection)

    def db_datetime(self, value):
        return self.connection.ops.adapt_datetimefield_value(value)

    def duration_param(self, seconds):
        """A duration as the vendor's SQL adds it to the store clock (seconds by default)."""
        return seconds

    def from_db_uuid(self, value):
        return self._uuid_field.to_python(value)

    def from_db_datetime(self, value):
        """Driver value of a datetime column -> aware datetime (PostgreSQL needs nothing)."""
        return value

    @staticmethod
    def stale_lease(job_id, fence):
        return StaleLease(f"Job {job_id}: fence {fence} is stale; the write was rejected.",
                          job_id=job_id, fence=fence)

    def fenced(self, cursor, job_id, fence):
        """Raise StaleLease when the fenced statement just executed matched no row."""
        if cursor.rowcount == 0:
            raise self.stale_lease(job_id, fence)

    # -- clock --------------------------------------------------------------------------------

    @runs("SQL_NOW")
    def now(self):
        """The store clock: the database's current UTC time as an aware datetime."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_NOW, [])  # a parameter list, even empty: see sqlite NOW
            return self.from_db_datetime(cursor.fetchone()[0])

    # -- statement budget ---------------------------------------------------------------------

    @contextmanager
    def statement_budget(self, seconds, *, lock_seconds=None):
        """Bound every statement this thread's connection runs inside the block: at most
        ``seconds`` of server time and ``lock_seconds`` of lock wait (default ``seconds``); one
        over it raises DatabaseError. Session-level, so it covers every transaction of the block
        and autocommit statements alike. On exit the previous session values come back; a
        connection that was replaced meanwhile is left alone (a new session has the defaults),
        and one whose restore fails is closed.

        PostgreSQL ``statement_timeout`` and ``lock_timeout``; MariaDB ``max_statement_time``
        (MySQL 8 ``max_execution_time``, SELECT only) with ``lock_wait_timeout`` and
        ``innodb_lock_wait_timeout`` in whole seconds; SQLite has no statement timeout: its busy
        timeout becomes ``lock_seconds`` when given, and is kept otherwise. Used for a duty's
        batch, the worker's own connections and the heartbeat prune.

        Under transaction pooling (``HEADGATE["POOLING"]``) no session setting survives a
        transaction: the block becomes one transaction with local limits (its own transactions
        become savepoints)."""
        pooled = self.transaction_pooled
        with self.atomic() if pooled else nullcontext():
            self.connection.ensure_connection()
            session = self.connection.connection
            previous = self.set_statement_budget(seconds, lock_seconds, local=pooled)
            try:
                yield
            finally:
                if previous is not None and self.connection.connection is session:
                    try:
                        self.restore_statement_budget(previous)
                    except DatabaseError:
                        self.connection.close()  # a fresh session starts with the server defaults

    @vendor_supplies
    def set_statement_budget(self, seconds, lock_seconds, *, local=False):
        """Set the session values of :meth:`statement_budget`; return what
        :meth:`restore_statement_budget` needs to put the previous ones back (None: nothing to
        put back). ``local``: for the current transaction only, where the vendor can (SET LOCAL)."""

    @vendor_supplies
    def restore_statement_budget(self, previous):
        """Put back the session values :meth:`set_statement_budget` returned."""
