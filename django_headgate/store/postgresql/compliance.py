"""PostgreSQL store, compliance section: legal holds (jsonb containment of the hold's tag)."""

from .. import archive_sealing, erasure
from ..erasure import (  # noqa: F401  (statements of this vendor, the same on every vendor)
    SQL_SELECT_ARCHIVED_COPIES, SQL_SELECT_ENDED_JOBS, SQL_SELECT_PRESENT_JOBS,
)
from ..fragments import ARCHIVE_COLUMNS
from ..holds import SQL_DELETE_HELD_ROWS, held_condition, select_released_held_rows  # noqa: F401

# The hold's tag is one of the row's tags (jsonb containment).
TAG_CONTAINS = "{tags} @> jsonb_build_array({tag}::text)"
# A hot job is held (the sweep's eligibility, fragments.SWEEP_ELIGIBLE).
JOB_HELD = held_condition(TAG_CONTAINS, "headgate_job", "id")
ARCHIVE_ROW_HELD = held_condition(TAG_CONTAINS, "archived", "job_id")

# Held rows of one archive child table ({table}: a quoted name from archive_layout).
SQL_COUNT_HELD_ARCHIVE_ROWS = f"SELECT count(*) FROM {{table}} AS archived WHERE {ARCHIVE_ROW_HELD}"
# Copy the held rows of one child into the held table (before its TRUNCATE, same transaction);
# a row copied by an interrupted earlier prune is left as it is.
SQL_MOVE_HELD_ARCHIVE_ROWS = f"""
INSERT INTO headgate_job_archive_held ({ARCHIVE_COLUMNS})
SELECT {ARCHIVE_COLUMNS} FROM {{table}} AS archived WHERE {ARCHIVE_ROW_HELD}
ON CONFLICT (archive_id) DO NOTHING
"""
# Held-table rows no unreleased hold covers any more (after a release), a batch of them.
SQL_SELECT_RELEASED_HELD_ROWS = select_released_held_rows(TAG_CONTAINS)


# -- erasure by tag (store/erasure.py builds them; the tag is bound) --
# Terminal hot rows carrying the tag, after a cursor, in primary-key order.
SQL_SELECT_ERASABLE_JOB = erasure.select_tagged("job", TAG_CONTAINS)
# Archived rows (every partition) carrying the tag, after a cursor, in archive_id order.
SQL_SELECT_ERASABLE_ARCHIVE = erasure.select_tagged("archive", TAG_CONTAINS)
# Held rows carrying the tag, after a cursor, in archive_id order.
SQL_SELECT_ERASABLE_HELD = erasure.select_tagged("held", TAG_CONTAINS)
# Blank one hot row's payloads (primary key).
SQL_BLANK_JOB = erasure.blank_tagged("job", "%s::jsonb")
# Blank one archived row's payloads (primary key, so one partition).
SQL_BLANK_ARCHIVE = erasure.blank_tagged("archive", "%s::jsonb")
# Blank one held row's payloads (primary key).
SQL_BLANK_HELD = erasure.blank_tagged("held", "%s::jsonb")
# Rows carrying the tag under a legal hold, in the three tables.
SQL_COUNT_HELD_TAGGED = erasure.count_held_tagged(TAG_CONTAINS, held_condition)
# Hot rows carrying the tag that wait or run (erased when they end), a bounded list of ids.
SQL_SELECT_UNFINISHED_TAGGED = erasure.select_unfinished_tagged(TAG_CONTAINS)


# -- crypto-shredding (store/archive_sealing.py builds them) --
# One month's archived rows with their payloads, after a (evicted_at_ms, archive_id) cursor.
SQL_SELECT_ARCHIVE_MONTH_PAYLOADS = archive_sealing.SELECT_MONTH_PAYLOADS
# Rewrite one archived row's payloads (its key, so one partition).
SQL_UPDATE_ARCHIVE_PAYLOADS = archive_sealing.update_payloads("%s::jsonb")
# Hot rows with their payloads, after a cursor (key rotation).
SQL_SELECT_HOT_PAYLOADS = archive_sealing.SELECT_HOT_PAYLOADS
# Rewrite one hot row's payloads and fingerprint, guarded by its state and attempts.
SQL_UPDATE_HOT_PAYLOADS = archive_sealing.update_hot_payloads("%s::jsonb")
