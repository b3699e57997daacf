"""Dashboard samples (issue 22, item 7): ``headgate_queue_sample``, one row per queue per pass of
the ``dashboard_sample`` duty. A new table only: nothing existing is rewritten. Never edit once
published.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('headgate', '0013_encryption'),
    ]

    operations = [
        migrations.CreateModel(
            name='QueueSample',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('sampled_at', models.DateTimeField()),
                ('queue', models.CharField(max_length=64)),
                ('available', models.IntegerField(default=0)),
                ('scheduled', models.IntegerField(default=0)),
                ('running', models.IntegerField(default=0)),
                ('held_back', models.IntegerField(default=0)),
                ('succeeded', models.IntegerField(default=0)),
                ('retried', models.IntegerField(default=0)),
                ('dead', models.IntegerField(default=0)),
            ],
            options={
                'db_table': 'headgate_queue_sample',
                'ordering': ['sampled_at', 'queue'],
                'indexes': [models.Index(fields=['sampled_at'], name='headgate_sample_at_idx')],
            },
        ),
    ]
