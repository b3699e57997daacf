"""Workflows (DESIGN §17): the ``waiting`` state, the dependency columns of ``headgate_job`` and
the ``headgate_job_dependency`` edges; batches (``headgate_batch``, ``headgate_job.batch_id``).

``has_dependents``: TRUE on a job other jobs depend on (only such rows run the release step when
they end). ``depends_on``: a dependent job's parent ids (JSON list). ``waiting_for``: how many of
its parents have not ended while it waits. ``on_parent_failure``: "cancel" or "run".
Nullable columns added at the end (no table rewrite; inserts that do not name them leave NULL).
``batch_id``: the batch a job is a member of (a partial index where the vendor has them).
The claim indexes lead with ``state``: a ``waiting`` row is never in a claim's range.
"""

from django.db import migrations, models


BATCH_INDEX = {"fields": ["batch_id"], "name": "headgate_job_batch_idx"}


def add_batch_index(apps, schema_editor):
    """A batch's members: a partial index where the vendor has them (jobs outside batches add no
    entry), a plain one elsewhere (MariaDB/MySQL). Not declared on the model, whose system check
    would warn on every command on MariaDB that the condition is ignored (models.W037)."""
    job = apps.get_model("headgate", "Job")
    partial = schema_editor.connection.features.supports_partial_indexes
    condition = models.Q(batch_id__isnull=False) if partial else None
    schema_editor.add_index(job, models.Index(**BATCH_INDEX, condition=condition))


def remove_batch_index(apps, schema_editor):
    schema_editor.remove_index(apps.get_model("headgate", "Job"), models.Index(**BATCH_INDEX))


class Migration(migrations.Migration):

    dependencies = [
        ('headgate', '0011_compliance'),
    ]

    operations = [
        migrations.CreateModel(
            name='Batch',
            fields=[
                ('id', models.UUIDField(primary_key=True, serialize=False)),
                ('total', models.IntegerField(blank=True, null=True)),
                ('succeeded', models.IntegerField(default=0)),
                ('dead', models.IntegerField(default=0)),
                ('cancelled', models.IntegerField(default=0)),
                ('on_success_id', models.UUIDField(blank=True, null=True)),
                ('on_finish_id', models.UUIDField(blank=True, null=True)),
                ('on_dead_id', models.UUIDField(blank=True, null=True)),
                ('created_at', models.DateTimeField()),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
            ],
            options={
                'verbose_name_plural': 'batches',
                'db_table': 'headgate_batch',
                'ordering': ['-created_at'],
            },
        ),
        migrations.CreateModel(
            name='JobDependency',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('parent_id', models.UUIDField()),
                ('child_id', models.UUIDField(db_index=True)),
            ],
            options={
                'db_table': 'headgate_job_dependency',
            },
        ),
        migrations.AddField(
            model_name='job',
            name='batch_id',
            field=models.UUIDField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='job',
            name='depends_on',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='job',
            name='has_dependents',
            field=models.BooleanField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='job',
            name='on_parent_failure',
            field=models.CharField(blank=True, max_length=8, null=True),
        ),
        migrations.AddField(
            model_name='job',
            name='waiting_for',
            field=models.IntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='job',
            name='state',
            field=models.CharField(choices=[('available', 'Available'), ('running', 'Running'), ('held_back', 'Held Back'), ('succeeded', 'Succeeded'), ('dead', 'Dead'), ('cancelled', 'Cancelled'), ('waiting', 'Waiting')], default='available', max_length=16),
        ),
        migrations.RunPython(add_batch_index, remove_batch_index, atomic=False),
        migrations.AddConstraint(
            model_name='jobdependency',
            constraint=models.UniqueConstraint(fields=('parent_id', 'child_id'), name='headgate_dependency_edge_uniq'),
        ),
    ]
