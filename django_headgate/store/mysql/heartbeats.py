"""MySQL / MariaDB store, heartbeats section: heartbeat rows, their prune (SELECT ... SKIP LOCKED
then DELETE, under a statement budget) and GET_LOCK advisory locks."""

import hashlib

from ..fragments import (  # noqa: F401  (SQL_DELETE_HEARTBEAT: a statement of this vendor)
    DELETE_HEARTBEATS, EXCLUDE_OWN_HEARTBEAT, RENEW_HEARTBEAT, SQL_DELETE_HEARTBEAT,
    STALE_HEARTBEATS, placeholders, register_heartbeat,
)
from .jobs import NOW

# Register our heartbeat row, or take it over when the worker_id is there already.
SQL_REGISTER_HEARTBEAT = register_heartbeat(NOW, "ON DUPLICATE KEY UPDATE", "VALUES({})")
SQL_RENEW_HEARTBEAT = RENEW_HEARTBEAT.format(now=NOW)

# Prune step 1: lock stale heartbeat rows, skipping rows a renewal holds, at most LIMIT.
# {exclude_own} is empty or EXCLUDE_OWN_HEARTBEAT.
SQL_PRUNE_HEARTBEATS_SELECT = (
    "SELECT worker_id FROM headgate_worker_heartbeat WHERE "
    + STALE_HEARTBEATS.format(cutoff=f"{NOW} - INTERVAL %s MICROSECOND", exclude_own="{exclude_own}")
    + " FOR UPDATE SKIP LOCKED"
)
# Prune step 2: delete the rows step 1 locked (same transaction; primary key).
SQL_PRUNE_HEARTBEATS_DELETE = DELETE_HEARTBEATS

# GET_LOCK names are server-wide (not per database, unlike PostgreSQL's advisory locks): the
# name is prefixed with the database name so two installations on one server never share a
# singleton. Names are limited to 64 characters, so a long one is hashed.
SQL_TRY_LOCK = "SELECT GET_LOCK(%s, 0)"
# Release a GET_LOCK lock.
SQL_UNLOCK = "SELECT RELEASE_LOCK(%s)"


GET_LOCK_MAX_NAME = 64


class MySQLHeartbeats:
    def lock_param(self, name):
        """``<database>:<name>``, or ``headgate:<sha256 prefix>`` of it when over 64 characters."""
        scoped = f"{self.connection.settings_dict['NAME']}:{name}"
        if len(scoped) <= GET_LOCK_MAX_NAME:
            return scoped
        return "headgate:" + hashlib.sha256(scoped.encode()).hexdigest()[:48]

    def prune_heartbeats(self, retention_seconds, limit, exclude=None, timeout_seconds=5.0):
        exclude_own = "" if exclude is None else EXCLUDE_OWN_HEARTBEAT
        params = [self.duration_param(retention_seconds), *self.exclude_own_params(exclude), limit]
        select = SQL_PRUNE_HEARTBEATS_SELECT.format(exclude_own=exclude_own)
        with self.statement_budget(timeout_seconds), self.atomic(), self.cursor() as cursor:
            cursor.execute(select, params)
            ids = [row[0] for row in cursor.fetchall()]
            if ids:
                cursor.execute(SQL_PRUNE_HEARTBEATS_DELETE.format(ids=placeholders(len(ids))), ids)
        return len(ids)
