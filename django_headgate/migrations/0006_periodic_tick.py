"""``headgate_periodic_tick``: how far each periodic schedule has been enqueued.

One small row per schedule name, moved by the ``periodic`` duty in the transaction that inserts
the tick's job, so a tick is enqueued once even after its job was evicted. Hand-written; never
edit once published.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("headgate", "0005_tasks_backend_task_name")]

    operations = [
        migrations.CreateModel(
            name="PeriodicTick",
            fields=[
                ("name", models.CharField(max_length=100, primary_key=True, serialize=False)),
                ("first_seen_at", models.DateTimeField()),
                ("last_tick_at", models.DateTimeField(blank=True, null=True)),
                ("last_job_id", models.UUIDField(blank=True, null=True)),
            ],
            options={"db_table": "headgate_periodic_tick", "ordering": ["name"]},
        ),
    ]
