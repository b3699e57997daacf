"""A partial index of ready rows in claim order, so that the claim's plan does not depend on
fresh statistics (docs/worker.md, "The claim's plan").

PostgreSQL and SQLite create ``headgate_job_ready_idx`` on ``(priority DESC, run_at) WHERE state
= 'available'``: it holds only ready rows, so an index scan stays the cheapest plan for the
claim's ``ORDER BY ... LIMIT`` whatever the planner believes about the table. MySQL/MariaDB have
no partial indexes: Django creates nothing there, and the claim keeps ``headgate_job_claim_any_idx``.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("headgate", "0004_retention_class_plural")]

    operations = [
        migrations.AddIndex(
            model_name="job",
            index=models.Index(
                fields=["-priority", "run_at"], condition=models.Q(state="available"),
                name="headgate_job_ready_idx",
            ),
        ),
    ]
