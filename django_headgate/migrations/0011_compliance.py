"""Compliance data lifetime (DESIGN §18): legal holds (``headgate_legal_hold``,
``headgate_legal_hold_job``), the archive rows a prune kept for a hold
(``headgate_job_archive_held``, the archive's columns, not partitioned) and the erasure records
(``headgate_erasure``). New tables only: nothing existing is rewritten. Never edit once published.
"""

import django.db.models.deletion
import django.db.models.expressions
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('headgate', '0010_operator_controls'),
    ]

    operations = [
        migrations.CreateModel(
            name='Erasure',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('tag', models.CharField(max_length=100)),
                ('reason', models.TextField()),
                ('requested_by', models.CharField(max_length=150)),
                ('override_hold', models.BooleanField(default=False)),
                ('counts', models.JSONField(default=dict)),
                ('cursor', models.JSONField(default=dict)),
                ('started_at', models.DateTimeField(auto_now_add=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
            ],
            options={
                'db_table': 'headgate_erasure',
                'ordering': ['-id'],
            },
        ),
        migrations.CreateModel(
            name='LegalHold',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('tag', models.CharField(blank=True, max_length=100, null=True)),
                ('reason', models.TextField()),
                ('created_by', models.CharField(max_length=150)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('released_by', models.CharField(blank=True, max_length=150, null=True)),
                ('released_at', models.DateTimeField(blank=True, null=True)),
            ],
            options={
                'db_table': 'headgate_legal_hold',
                'ordering': ['-id'],
                'permissions': [('manage_legal_hold', 'Can place and release legal holds')],
            },
        ),
        migrations.CreateModel(
            name='HeldArchivedJob',
            fields=[
                ('archive_id', models.UUIDField(primary_key=True, serialize=False)),
                ('job_id', models.UUIDField()),
                ('queue', models.CharField(max_length=64)),
                ('task', models.CharField(max_length=255)),
                ('args', models.JSONField(default=list)),
                ('kwargs', models.JSONField(default=dict)),
                ('errors', models.JSONField(default=list)),
                ('attempts', models.IntegerField()),
                ('fingerprint', models.CharField(max_length=64)),
                ('terminal_state', models.CharField(choices=[('succeeded', 'Succeeded'), ('dead', 'Dead'), ('cancelled', 'Cancelled')], max_length=16)),
                ('result', models.JSONField(blank=True, null=True)),
                ('tags', models.JSONField(default=list)),
                ('created_at', models.DateTimeField()),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('evicted_at_ms', models.BigIntegerField()),
                ('archive_retention_ms', models.BigIntegerField()),
                ('expires_at_ms', models.GeneratedField(db_persist=True, expression=django.db.models.expressions.CombinedExpression(models.F('evicted_at_ms'), '+', models.F('archive_retention_ms')), output_field=models.BigIntegerField())),
            ],
            options={
                'verbose_name': 'held archived job',
                'db_table': 'headgate_job_archive_held',
                'ordering': ['-evicted_at_ms'],
                'indexes': [models.Index(fields=['job_id'], name='headgate_held_job_idx')],
            },
        ),
        migrations.CreateModel(
            name='LegalHoldJob',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('job_id', models.UUIDField()),
                ('hold', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='jobs', to='headgate.legalhold')),
            ],
            options={
                'db_table': 'headgate_legal_hold_job',
                'indexes': [models.Index(fields=['job_id'], name='headgate_hold_job_idx')],
            },
        ),
    ]
