"""SQL pieces of legal holds (DESIGN §18) shared by the vendors: "is this row held?".

A row is held while an unreleased ``headgate_legal_hold`` names its tag or (through
``headgate_legal_hold_job``) its job id. Tables are named in full, never aliased: MySQL/MariaDB
statements run under ``LOCK TABLES``, which refuses an alias it was not given. The tag test is
the vendor's (``{tags}`` contains the text ``{tag}``).

The held table's clean-up after a release is here too: its delete is the same on every vendor,
its select is built with the vendor's tag test.
"""

# A row is held ({tag_held}: the vendor's containment test of the hold's tag in the row's tags;
# {job_id}: the row's job id column). Served by headgate_hold_job_idx; the hold table is small.
HELD = (
    "EXISTS (SELECT 1 FROM headgate_legal_hold WHERE headgate_legal_hold.released_at IS NULL AND "
    "({tag_held} OR EXISTS (SELECT 1 FROM headgate_legal_hold_job "
    "WHERE headgate_legal_hold_job.hold_id = headgate_legal_hold.id "
    "AND headgate_legal_hold_job.job_id = {job_id})))"
)
HOLD_TAG = "headgate_legal_hold.tag"
HELD_TABLE = "headgate_job_archive_held"

# Delete held-table rows by primary key.
SQL_DELETE_HELD_ROWS = f"DELETE FROM {HELD_TABLE} WHERE archive_id IN ({{ids}})"


def held_condition(tag_contains, table, job_id_column):
    """The HELD test for a row of ``table`` (a fixed table name of this package) whose job id is
    ``job_id_column``; ``tag_contains`` formats ``{tags}`` and ``{tag}`` as the vendor's test."""
    tag_held = tag_contains.format(tags=f"{table}.tags", tag=HOLD_TAG)
    return HELD.format(tag_held=tag_held, job_id=f"{table}.{job_id_column}")


def select_released_held_rows(tag_contains):
    """Held-table rows no unreleased hold covers any more (after a release), at most the bound
    limit; ``tag_contains`` as for :func:`held_condition`."""
    return f"SELECT archive_id FROM {HELD_TABLE} WHERE NOT {held_condition(tag_contains, HELD_TABLE, 'job_id')} LIMIT %s"
