"""SQL of crypto-shredding and key rotation (DESIGN §18): the archive rows of one month read and
rewritten with their payloads encrypted under the month's data key
(``compliance/archive_sealing.py``), and the hot rows re-encrypted under the ACTIVE key.

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


#: Hot rows after a cursor, in primary-key order: ``[cursor id, limit]``.
SELECT_HOT_PAYLOADS = (
    "SELECT id, state, attempts, task, args, kwargs, result, progress, output, errors FROM headgate_job "
    "WHERE id > %s ORDER BY id LIMIT %s"
)


def update_hot_payloads(json_param):
    """Rewrite one hot row's payloads and fingerprint, only while it is in the state and at the
    attempt it was read in (a claim in between leaves it to the next run): ``[args, kwargs,
    result, progress, output, errors, fingerprint, id, state, attempts]``."""
    return (f"UPDATE headgate_job SET args = {json_param}, kwargs = {json_param}, result = {json_param}, "
            f"progress = {json_param}, output = %s, errors = {json_param}, fingerprint = COALESCE(%s, fingerprint) "
            "WHERE id = %s AND (state = %s) IS NOT FALSE AND attempts = %s")
