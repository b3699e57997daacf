"""MySQL / MariaDB store, flow section (DESIGN §15): key lock rows (``key`` is reserved)."""

from ..flow_fragments import (  # noqa: F401  (statements of this vendor)
    EXISTING_FLOW_KEYS, SQL_COUNT_RUNNING_OF_KEYS, SQL_HELD_BACK_OF_KEY, SQL_HOLD_BACK_MANY,
    SQL_COUNT_RUNNING_IN_QUEUE, SQL_KEYS_OF_JOBS, SQL_MAKE_AVAILABLE, SQL_READ_QUEUE_CONTROL, SQL_SET_CONCURRENCY,
    SQL_DEFER_TO_WINDOW, SQL_HELD_BACK_KEYS, SQL_SET_RATE_WINDOW, READ_FLOW_WINDOW, SET_FLOW_WINDOW,
)

SQL_READ_FLOW_WINDOW = READ_FLOW_WINDOW.format(key="`key`")
SQL_SET_FLOW_WINDOW = SET_FLOW_WINDOW.format(key="`key`")
SQL_EXISTING_FLOW_KEYS = EXISTING_FLOW_KEYS.format(key="`key`")
# A key's lock row, inserted once (only when the read found none: an insert that meets a
# duplicate would hold a shared lock on it until commit).
SQL_INSERT_FLOW_KEY = "INSERT IGNORE INTO headgate_flow_key (`key`, window_count) VALUES (%s, 0)"
# Lock a key's row until the transaction ends: claims and releases of one key take turns.
SQL_LOCK_FLOW_KEY = "SELECT `key` FROM headgate_flow_key WHERE `key` = %s FOR UPDATE"
# The same for several keys, locked in key order (the primary key's scan order).
SQL_LOCK_FLOW_KEYS = "SELECT `key` FROM headgate_flow_key WHERE `key` IN ({keys}) ORDER BY `key` FOR UPDATE"
# Lock a queue's control row until the transaction ends: controlled claims of a queue take turns.
SQL_LOCK_QUEUE_CONTROL = "SELECT queue FROM headgate_queue_control WHERE queue = %s FOR UPDATE"
