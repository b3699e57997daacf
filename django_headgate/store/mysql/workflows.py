"""MySQL / MariaDB store, workflows section: the parents of a dependent job and the release step."""

from ..workflow_statements import (  # noqa: F401  (statements of this vendor)
    CANCEL_WAITING, LOCK_PARENTS, RECORD_PARENTS, RELEASE_WAITING, SQL_DEPENDENTS_OF, SQL_DEPENDS_ON, SQL_EDGE_ROW,
    SQL_FLAG_PARENTS, SQL_FORGET_EDGES, SQL_INSERT_EDGE_HEAD, SQL_PARENT_RESULTS,
)
from .jobs import EXPIRES_NOW, NOW

# A locking read: the latest committed states, whatever the transaction read before.
SQL_LOCK_PARENTS = LOCK_PARENTS.format(lock="ORDER BY id FOR UPDATE")
SQL_RECORD_PARENTS = RECORD_PARENTS.format(json="%s")
SQL_CANCEL_WAITING = CANCEL_WAITING.format(now=NOW, expires_now=EXPIRES_NOW)
SQL_RELEASE_WAITING = RELEASE_WAITING
