"""PostgreSQL store, compliance section: legal holds (jsonb containment of the hold's tag)."""

from ..fragments import ARCHIVE_COLUMNS
from ..holds import held_condition

# The hold's tag is one of the row's tags (jsonb containment).
TAG_CONTAINS = "{tags} @> jsonb_build_array({tag})"
# A hot job is held (the sweep's eligibility, fragments.SWEEP_ELIGIBLE).
JOB_HELD = held_condition(TAG_CONTAINS, "headgate_job", "id")
ARCHIVE_ROW_HELD = held_condition(TAG_CONTAINS, "archived", "job_id")
HELD_ROW_HELD = held_condition(TAG_CONTAINS, "headgate_job_archive_held", "job_id")

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
SQL_SELECT_RELEASED_HELD_ROWS = (
    f"SELECT archive_id FROM headgate_job_archive_held WHERE NOT {HELD_ROW_HELD} LIMIT %s"
)
# Delete held-table rows by primary key.
SQL_DELETE_HELD_ROWS = "DELETE FROM headgate_job_archive_held WHERE archive_id IN ({ids})"

