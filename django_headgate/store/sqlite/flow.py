"""SQLite store, flow section (DESIGN §15): the key "lock" is a write, which takes the single
writer lock for the rest of the transaction."""

from ..flow_fragments import (  # noqa: F401  (statements of this vendor)
    EXISTING_FLOW_KEYS, SQL_COUNT_RUNNING_OF_KEYS, SQL_HELD_BACK_OF_KEY, SQL_HOLD_BACK_MANY,
    SQL_COUNT_RUNNING_IN_QUEUE, SQL_KEYS_OF_JOBS, SQL_MAKE_AVAILABLE, SQL_READ_QUEUE_CONTROL, SQL_SET_CONCURRENCY,
    SQL_DEFER_TO_WINDOW, SQL_HELD_BACK_KEYS, SQL_SET_RATE_WINDOW, READ_FLOW_WINDOW, SET_FLOW_WINDOW,
)

SQL_READ_FLOW_WINDOW = READ_FLOW_WINDOW.format(key='"key"')
SQL_SET_FLOW_WINDOW = SET_FLOW_WINDOW.format(key='"key"')
SQL_EXISTING_FLOW_KEYS = EXISTING_FLOW_KEYS.format(key='"key"')
# A key's lock row, inserted once.
SQL_INSERT_FLOW_KEY = 'INSERT OR IGNORE INTO headgate_flow_key ("key", window_count) VALUES (%s, 0)'
# A write to the key's row: the transaction holds the database's one writer lock from here on,
# so the count that follows cannot change under it.
SQL_LOCK_FLOW_KEY = 'UPDATE headgate_flow_key SET "key" = "key" WHERE "key" = %s'
# The same write on several keys' rows.
SQL_LOCK_FLOW_KEYS = 'UPDATE headgate_flow_key SET "key" = "key" WHERE "key" IN ({keys})'
# The same for a queue's control row.
SQL_LOCK_QUEUE_CONTROL = "UPDATE headgate_queue_control SET queue = queue WHERE queue = %s"
