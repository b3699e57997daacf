"""``headgate_job.unique_until``: NULL (the key is held until eviction) or ``'finished'`` (held
while the job is not terminal). A nullable column added at the end: no table rewrite on
PostgreSQL or MariaDB (instant ADD COLUMN), a plain ``ALTER TABLE ADD COLUMN`` on SQLite. The
insert statements do not name it, so existing rows and the bulk insert keep NULL. Never edit
once published.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("headgate", "0006_periodic_tick")]

    operations = [
        migrations.AddField(
            model_name="job",
            name="unique_until",
            field=models.CharField(blank=True, max_length=16, null=True),
        ),
    ]
