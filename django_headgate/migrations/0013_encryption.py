"""Payload encryption at rest and crypto-shredding (DESIGN §18): ``headgate_archive_key``, one
wrapped data key per archive month (shredding empties it). A new table only: nothing existing is
rewritten. Never edit once published.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('headgate', '0012_workflows'),
    ]

    operations = [
        migrations.CreateModel(
            name='ArchiveKey',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('month', models.CharField(max_length=6, unique=True)),
                ('wrapped_key', models.TextField(blank=True)),
                ('key_name', models.CharField(max_length=64)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('shredded_at', models.DateTimeField(blank=True, null=True)),
                ('shredded_by', models.CharField(blank=True, max_length=150)),
                ('sealed_through_ms', models.BigIntegerField(default=0)),
            ],
            options={
                'db_table': 'headgate_archive_key',
                'ordering': ['month'],
            },
        ),
    ]
