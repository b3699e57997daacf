"""``headgate_duty_run``: the last pass of each maintenance duty and when the next is due.

One small row per duty, so that ``headgate_status`` (another process) can show the last outcome
and a maintainer's cadence (a full heartbeat batch: next pass 1 minute after the previous start;
a failure: 1 hour) survives restarts and is shared by every maintainer. Hand-written; never edit
once published.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("headgate", "0002_job_archive")]

    operations = [
        migrations.CreateModel(
            name="DutyRun",
            fields=[
                ("duty", models.CharField(max_length=64, primary_key=True, serialize=False)),
                ("status", models.CharField(max_length=32)),
                ("rows", models.IntegerField(default=0)),
                ("batches", models.IntegerField(default=0)),
                ("seconds", models.FloatField(default=0.0)),
                ("started_at", models.DateTimeField()),
                ("finished_at", models.DateTimeField()),
                ("next_run_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={"db_table": "headgate_duty_run", "ordering": ["duty"]},
        ),
    ]
