"""``headgate_job.timeout``, ``abort_requested_at`` and ``snoozes`` (DESIGN §12 job control).

``timeout``: the attempt's time limit in seconds, NULL when the job has none.
``abort_requested_at``: store time at which ``cancel()`` asked the running attempt to stop.
``snoozes``: how many times the job raised ``Snooze`` (NULL = never), which bounds snoozing.

Nullable columns added at the end: no table rewrite on PostgreSQL or MariaDB (instant ADD
COLUMN), a plain ``ALTER TABLE ADD COLUMN`` on SQLite; insert statements that do not name them
leave NULL. Never edit once published.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("headgate", "0007_job_unique_until")]

    operations = [
        migrations.AddField(
            model_name="job",
            name="timeout",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="job",
            name="abort_requested_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="job",
            name="snoozes",
            field=models.IntegerField(blank=True, null=True),
        ),
    ]
