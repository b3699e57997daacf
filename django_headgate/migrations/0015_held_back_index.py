"""The next held-back row of a concurrency key, by a partial index of held-back rows only
(``headgate_job_held_back_idx``): PostgreSQL's acknowledgement hands a freed slot to it in the
same statement, and releases read it; no other write pays for it. PostgreSQL and SQLite only:
MariaDB has no partial index (its releases read ``headgate_job_flow_key_idx``), and an index
with a condition in the model would make Django warn (models.W037) on every MariaDB command, so
it is made here rather than declared in ``Job.Meta``. An index only; never edit once published.
"""

from django.db import migrations

# The predicate is written as the statements that use the index write their test
# (store/fragments.state_is): PostgreSQL can then use no other index for "held back" by mistake.
CREATE = ("CREATE INDEX headgate_job_held_back_idx ON headgate_job (concurrency_key, priority DESC, run_at) "
          "WHERE (state = 'held_back') IS TRUE")
DROP = "DROP INDEX headgate_job_held_back_idx"
VENDORS = ("postgresql", "sqlite")


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor in VENDORS:
        schema_editor.execute(CREATE)


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor in VENDORS:
        schema_editor.execute(DROP)


class Migration(migrations.Migration):

    dependencies = [
        ('headgate', '0014_dashboard_samples'),
    ]

    operations = [
        migrations.RunPython(create_index, drop_index, elidable=False),
    ]
