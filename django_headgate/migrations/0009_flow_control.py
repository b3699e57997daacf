"""Flow control (DESIGN §15): concurrency keys on ``headgate_job`` and their lock rows.

``concurrency_key`` / ``concurrency_limit``: nullable columns added at the end (no table rewrite
on PostgreSQL or MariaDB); a job without a key is never limited. ``headgate_job_flow_key_idx``
serves the two reads of a limited claim or release: the running rows of one key (a count) and
its held-back rows in claim order. ``headgate_flow_key`` holds one row per key: the row a claim
and a release lock so that they count a key's running jobs one transaction at a time; a task's
rate limit has a ``rate:<task>`` row there, with its current window.
``headgate_queue_control``: a queue's run-time controls (pause, concurrency cap, rate limit and
its current window). The new state ``held_back`` needs no DDL (``state`` is a plain column).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("headgate", "0008_job_control_columns")]

    operations = [
        migrations.CreateModel(
            name="FlowKey",
            fields=[
                ("key", models.CharField(max_length=255, primary_key=True, serialize=False)),
                ("window_started_at", models.DateTimeField(blank=True, null=True)),
                ("window_count", models.IntegerField(default=0)),
            ],
            options={"db_table": "headgate_flow_key"},
        ),
        migrations.CreateModel(
            name="QueueControl",
            fields=[
                ("queue", models.CharField(max_length=64, primary_key=True, serialize=False)),
                ("paused", models.BooleanField(default=False)),
                ("concurrency", models.IntegerField(blank=True, null=True)),
                ("rate_limit", models.CharField(blank=True, max_length=32, null=True)),
                ("window_started_at", models.DateTimeField(blank=True, null=True)),
                ("window_count", models.IntegerField(default=0)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={"db_table": "headgate_queue_control", "ordering": ["queue"]},
        ),
        migrations.AddField(
            model_name="job",
            name="concurrency_key",
            field=models.CharField(blank=True, max_length=255, null=True),
        ),
        migrations.AddField(
            model_name="job",
            name="concurrency_limit",
            field=models.IntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="job",
            name="state",
            field=models.CharField(
                choices=[("available", "Available"), ("running", "Running"), ("held_back", "Held Back"),
                         ("succeeded", "Succeeded"), ("dead", "Dead"), ("cancelled", "Cancelled")],
                default="available", max_length=16),
        ),
        migrations.AddIndex(
            model_name="job",
            index=models.Index(fields=["concurrency_key", "state", "-priority", "run_at"],
                               name="headgate_job_flow_key_idx"),
        ),
    ]
