"""MySQL / MariaDB store, workflows section: the parents of a dependent job and the release step."""

from ..workflow_statements import (
    CANCEL_WAITING, CLAIM_BY_ID, COMPLETE_FENCED, FINISH_BATCH, INSERT_BATCH, LOCK_PARENTS, READ_BATCH,
    RECORD_PARENTS,
)
from ..workflow_statements import (  # noqa: F401  (statements of this vendor, declared once there)
    SQL_ADD_BATCH_MEMBERS, SQL_BATCH_ENDINGS, SQL_CLOSE_BATCH, SQL_COUNT_BATCH_ENDINGS, SQL_DEPENDENTS_OF,
    SQL_DEPENDS_ON, SQL_EDGE_ROW, SQL_FLAG_PARENTS, SQL_FORGET_EDGES, SQL_HOLD_CALLBACK,
    SQL_INSERT_EDGE_HEAD, SQL_PARENT_RESULTS, SQL_READ_CLAIMED, SQL_RELEASE_WAITING,
)
from .jobs import EXPIRES_NOW, NOW, NOW_PLUS

# A locking read: the latest committed states, whatever the transaction read before.
SQL_LOCK_PARENTS = LOCK_PARENTS.format(lock="ORDER BY id FOR UPDATE")
SQL_RECORD_PARENTS = RECORD_PARENTS.format(json="%s")
SQL_CANCEL_WAITING = CANCEL_WAITING.format(now=NOW, expires_now=EXPIRES_NOW)
SQL_INSERT_BATCH = INSERT_BATCH.format(now=NOW)
SQL_READ_BATCH = READ_BATCH.format(lock="FOR UPDATE")
SQL_FINISH_BATCH = FINISH_BATCH.format(now=NOW)
SQL_COMPLETE_FENCED = COMPLETE_FENCED.format(json="%s", now=NOW, expires_now=EXPIRES_NOW)
SQL_CLAIM_BY_ID = CLAIM_BY_ID.format(now=NOW, now_plus=NOW_PLUS)
