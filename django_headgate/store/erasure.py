"""SQL of erasure by tag (DESIGN §18), built once per vendor from its tag test and JSON cast.

Three tables carry payloads: the hot table (terminal rows only: a job that waits or runs is
erased when it ends), the archive (every partition, closed months included: one statement on
the parent) and the held table. Each is walked in primary-key order from a cursor (keyset), a
batch at a time; the rows found are rewritten by key with blank payloads and their errors with
blank messages and tracebacks (the caller computes those). ``{tag_test}`` binds the tag.

The statements that read the same on every vendor are declared here once; a vendor's
``compliance.py`` builds the others with its tag test and JSON cast.
"""

from .fragments import TERMINAL_STATES_SQL

#: ``{table key: (table, key columns, extra condition, blanked assignments)}``: a closed set.
ERASABLE = {
    "job": ("headgate_job", ("id",), f"AND state IN {TERMINAL_STATES_SQL}",
            "result = NULL, output = NULL, progress = NULL"),
    "archive": ("headgate_job_archive", ("archive_id", "evicted_at_ms"), "",
                "result = NULL"),
    "held": ("headgate_job_archive_held", ("archive_id", "evicted_at_ms"), "",
             "result = NULL"),
}


def select_tagged(key, tag_contains):
    """Rows of table ``key`` carrying the bound tag after the bound cursor, keyed, with their
    errors: ``[tag, cursor, limit]`` -> ``(key columns..., errors)``."""
    table, keys, extra, _ = ERASABLE[key]
    tag_test = tag_contains.format(tags=f"{table}.tags", tag="%s")
    return (f"SELECT {', '.join(keys)}, errors FROM {table} WHERE {tag_test} {extra} "
            f"AND {keys[0]} > %s ORDER BY {keys[0]} LIMIT %s")


def blank_tagged(key, json_param):
    """Blank one row of table ``key`` by its key: ``[args, kwargs, errors, key values...]`` (the
    blank args and kwargs are bound too: ``[]`` and ``{}``)."""
    table, keys, _, blanked = ERASABLE[key]
    where = " AND ".join(f"{column} = %s" for column in keys)
    return (f"UPDATE {table} SET args = {json_param}, kwargs = {json_param}, {blanked}, "
            f"errors = {json_param} WHERE {where}")


def count_held_tagged(tag_contains, held_condition):
    """Rows carrying the bound tag (one parameter per table) that a legal hold covers, summed."""
    parts = []
    for key in ("job", "archive", "held"):
        table, keys, _, _ = ERASABLE[key]
        job_id = "id" if key == "job" else "job_id"
        test = tag_contains.format(tags=f"{table}.tags", tag="%s")
        parts.append(f"(SELECT count(*) FROM {table} WHERE {test} AND {held_condition(tag_contains, table, job_id)})")
    return "SELECT " + " + ".join(parts)


def select_unfinished_tagged(tag_contains):
    """Ids of hot rows carrying the bound tag that wait or run (erased when they end), at most
    the bound limit."""
    test = tag_contains.format(tags="headgate_job.tags", tag="%s")
    return f"SELECT id FROM headgate_job WHERE {test} AND state NOT IN {TERMINAL_STATES_SQL} LIMIT %s"


# -- the same on every vendor: the vendors' compliance modules import these --
# Listed jobs an erasure waited for that have ended (primary key).
SQL_SELECT_ENDED_JOBS = f"SELECT id, errors FROM headgate_job WHERE id IN ({{ids}}) AND state IN {TERMINAL_STATES_SQL}"
# Listed jobs still in the hot table (primary key).
SQL_SELECT_PRESENT_JOBS = "SELECT id FROM headgate_job WHERE id IN ({ids})"
# Archived copies of listed jobs swept before their erasure (headgate_archive_job_idx).
SQL_SELECT_ARCHIVED_COPIES = (
    "SELECT archive_id, evicted_at_ms, errors FROM headgate_job_archive WHERE job_id IN ({ids})"
)


