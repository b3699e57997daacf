"""Workflows (DESIGN §17): the ``waiting`` state, the dependency columns of ``headgate_job`` and
the ``headgate_job_dependency`` edges.

``has_dependents``: TRUE on a job other jobs depend on (only such rows run the release step when
they end). ``depends_on``: a dependent job's parent ids (JSON list). ``waiting_for``: how many of
its parents have not ended while it waits. ``on_parent_failure``: "cancel" or "run".
Nullable columns added at the end (no table rewrite; inserts that do not name them leave NULL).
The claim indexes lead with ``state``: a ``waiting`` row is never in a claim's range.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('headgate', '0008_job_control_columns'),
    ]

    operations = [
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
            field=models.CharField(choices=[('available', 'Available'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('dead', 'Dead'), ('cancelled', 'Cancelled'), ('waiting', 'Waiting')], default='available', max_length=16),
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
                'constraints': [models.UniqueConstraint(fields=('parent_id', 'child_id'), name='headgate_dependency_edge_uniq')],
            },
        ),
    ]
