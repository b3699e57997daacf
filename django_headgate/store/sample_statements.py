"""Statements of the samples section (the dashboard's 24 hours, issue 22 item 7): the same text on
every vendor, so each vendor lists this module among its ``statements``. Times are bound
parameters computed from one reading of the store clock (``SamplesContract.take_queue_sample``)."""

# Live jobs per queue at the sample's moment: ready (available and due), scheduled (available,
# due later), running, held back. Reads the live rows only, through headgate_job_claim_idx
# (state, queue, ..., run_at): bounded by the backlog, never by the finished history.
SQL_SAMPLE_QUEUE_DEPTHS = """
SELECT queue,
       SUM(CASE WHEN state = 'available' AND run_at <= %s THEN 1 ELSE 0 END),
       SUM(CASE WHEN state = 'available' AND run_at > %s THEN 1 ELSE 0 END),
       SUM(CASE WHEN state = 'running' THEN 1 ELSE 0 END),
       SUM(CASE WHEN state = 'held_back' THEN 1 ELSE 0 END)
FROM headgate_job
WHERE state IN ('available', 'running', 'held_back')
GROUP BY queue
"""
# Retention classes that expire (key, duration): finished jobs are found through their expiry.
SQL_EXPIRING_RETENTION_CLASSES = (
    "SELECT rc.key, rc.duration FROM headgate_retention_class rc WHERE rc.duration IS NOT NULL"
)
# Jobs of one retention class that finished in (since, until], per queue and outcome, with their
# failed attempts that were retried (every attempt before the last). finished_at has no index:
# expires_at = finished_at + the class's duration, so the window shifted by the duration is one
# range of headgate_job_expires_idx. Parameters: class, expiry bounds, finish bounds.
SQL_COUNT_FINISHED_OUTCOMES = """
SELECT queue, state, COUNT(*), SUM(CASE WHEN attempts > 1 THEN attempts - 1 ELSE 0 END)
FROM headgate_job
WHERE expires_at > %s AND expires_at <= %s AND retention_class = %s
  AND finished_at > %s AND finished_at <= %s AND state IN ('succeeded', 'dead')
GROUP BY queue, state
"""
# The newest sample's time (headgate_sample_at_idx): the previous sample ends the next window.
SQL_LAST_SAMPLE_AT = "SELECT MAX(sampled_at) FROM headgate_queue_sample"
# One queue's row of a sample.
SQL_INSERT_QUEUE_SAMPLE = """
INSERT INTO headgate_queue_sample
    (sampled_at, queue, available, scheduled, running, held_back, succeeded, retried, dead)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
"""
# Prune step 1: the oldest samples taken before the cutoff, at most %s (headgate_sample_at_idx).
SQL_SELECT_OLD_SAMPLES = "SELECT id FROM headgate_queue_sample WHERE sampled_at < %s ORDER BY sampled_at LIMIT %s"
# Prune step 2: those rows, by primary key ({ids}: one %s per id).
SQL_DELETE_SAMPLES = "DELETE FROM headgate_queue_sample WHERE id IN ({ids})"
