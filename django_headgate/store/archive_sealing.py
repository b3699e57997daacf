"""SQL of crypto-shredding (DESIGN §18): the archive rows of one month read and rewritten with
their payloads encrypted under the month's data key (``compliance/archive_sealing.py``).

Rows are read from the parent table within the month's ``evicted_at_ms`` range (one partition
on PostgreSQL and MySQL/MariaDB), after a keyset cursor ``(evicted_at_ms, archive_id)``, and
rewritten one by one by their key (``archive_id``, ``evicted_at_ms``: one partition).
"""

#: ``[start_ms, end_ms, cursor ms, cursor ms, cursor archive_id, limit]``.
SELECT_MONTH_PAYLOADS = (
    "SELECT archive_id, evicted_at_ms, args, kwargs, result, errors FROM headgate_job_archive "
    "WHERE evicted_at_ms >= %s AND evicted_at_ms < %s "
    "AND (evicted_at_ms > %s OR (evicted_at_ms = %s AND archive_id > %s)) "
    "ORDER BY evicted_at_ms, archive_id LIMIT %s"
)


def update_payloads(json_param):
    """Rewrite one archived row's payloads by its key: ``[args, kwargs, result, errors,
    archive_id, evicted_at_ms]``."""
    return (f"UPDATE headgate_job_archive SET args = {json_param}, kwargs = {json_param}, "
            f"result = {json_param}, errors = {json_param} WHERE archive_id = %s AND evicted_at_ms = %s")
