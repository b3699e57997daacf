"""Operator controls (DESIGN §16): ``headgate_job.awaited`` and, on PostgreSQL, the trigger that
wakes ``headgate.wait()``; ``headgate_job.meta`` (``enqueue(meta=)``).

``meta``: the caller's small JSON dict, NULL when none (a nullable column added at the end).
``headgate_periodic_tick.paused_at``: when an operator paused the schedule (NULL: running).
The ``replay_archived_job`` permission (admin replay of an archived job, with ``view_job_payload``).
``awaited``: set by a waiter on PostgreSQL; a nullable column added at the end (no table rewrite
on PostgreSQL or MariaDB). The trigger fires only for rows whose ``awaited`` is true turning
terminal (its WHEN clause is checked without calling the function), so jobs nobody waits for
send no NOTIFY. Other vendors poll and get no trigger. Never edit once published.
"""

from django.db import migrations, models

# The channel headgate.wait() listens on; the payload is the job id.
CREATE_FUNCTION = """
CREATE FUNCTION headgate_notify_job_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('headgate_job_ended', NEW.id::text);
    RETURN NULL;
END
$$
"""
CREATE_TRIGGER = """
CREATE TRIGGER headgate_job_ended AFTER UPDATE OF state ON headgate_job
FOR EACH ROW WHEN (NEW.awaited AND NEW.state IN ('succeeded', 'dead', 'cancelled')
                   AND OLD.state IS DISTINCT FROM NEW.state)
EXECUTE FUNCTION headgate_notify_job_ended()
"""
DROP_TRIGGER = "DROP TRIGGER IF EXISTS headgate_job_ended ON headgate_job"
DROP_FUNCTION = "DROP FUNCTION IF EXISTS headgate_notify_job_ended()"


def create_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE_FUNCTION)
        schema_editor.execute(CREATE_TRIGGER)


def drop_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP_TRIGGER)
        schema_editor.execute(DROP_FUNCTION)


class Migration(migrations.Migration):
    dependencies = [("headgate", "0009_flow_control")]

    operations = [
        migrations.AlterModelOptions(
            name="archivedjob",
            options={
                "ordering": ["-evicted_at_ms"],
                "permissions": [("view_archive_payload", "Can reveal archived job payloads"),
                                ("replay_archived_job", "Can replay an archived job as a new job")],
                "verbose_name": "archived job",
            },
        ),
        migrations.AddField(
            model_name="job",
            name="awaited",
            field=models.BooleanField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="job",
            name="meta",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="periodictick",
            name="paused_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(create_trigger, drop_trigger),
    ]
