"""Hot tables of django-headgate (DESIGN §4). Hand-written; never edit once published.

``headgate_job`` is a plain table on purpose: it carries global job-ID and unique-key guarantees
that a partitioned table could not (a partition key must be part of every unique key).
"""

from datetime import timedelta

from django.db import migrations, models

JOB_STATES = [
    ("available", "Available"),
    ("running", "Running"),
    ("succeeded", "Succeeded"),
    ("dead", "Dead"),
    ("cancelled", "Cancelled"),
]

# Built-in retention classes, frozen here (later changes are new migrations).
BUILTIN_CLASSES = {"standard_30d": timedelta(days=30), "forever": None}


def create_builtin_classes(apps, schema_editor):
    RetentionClass = apps.get_model("headgate", "RetentionClass")
    db = schema_editor.connection.alias
    for key, duration in BUILTIN_CLASSES.items():
        RetentionClass.objects.using(db).get_or_create(key=key, defaults={"duration": duration})


def delete_builtin_classes(apps, schema_editor):
    RetentionClass = apps.get_model("headgate", "RetentionClass")
    RetentionClass.objects.using(schema_editor.connection.alias).filter(key__in=BUILTIN_CLASSES).delete()


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="Job",
            fields=[
                ("id", models.UUIDField(primary_key=True, serialize=False)),
                ("queue", models.CharField(max_length=64)),
                ("task", models.CharField(max_length=255)),
                ("args", models.JSONField(default=list)),
                ("kwargs", models.JSONField(default=dict)),
                ("priority", models.SmallIntegerField(default=0)),
                ("state", models.CharField(choices=JOB_STATES, default="available", max_length=16)),
                ("run_at", models.DateTimeField()),
                ("attempts", models.IntegerField(default=0)),
                ("max_attempts", models.IntegerField()),
                ("lease_owner", models.CharField(blank=True, max_length=200, null=True)),
                ("lease_expires_at", models.DateTimeField(blank=True, null=True)),
                ("fence", models.BigIntegerField(default=0)),
                ("unique_key", models.CharField(blank=True, max_length=255, null=True, unique=True)),
                ("fingerprint", models.CharField(max_length=64)),
                ("progress", models.JSONField(blank=True, null=True)),
                ("result", models.JSONField(blank=True, null=True)),
                ("output", models.TextField(blank=True, null=True)),
                ("errors", models.JSONField(default=list)),
                ("tags", models.JSONField(default=list)),
                ("retention_class", models.CharField(max_length=100)),
                ("created_at", models.DateTimeField()),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("expires_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "db_table": "headgate_job",
                "ordering": ["-created_at"],
                "permissions": [("view_job_payload", "Can view job arguments and results")],
                "indexes": [
                    models.Index(fields=["state", "queue", "-priority", "run_at"], name="headgate_job_claim_idx"),
                    models.Index(fields=["state", "-priority", "run_at"], name="headgate_job_claim_any_idx"),
                    models.Index(fields=["expires_at"], name="headgate_job_expires_idx"),
                ],
            },
        ),
        migrations.CreateModel(
            name="RetentionClass",
            fields=[
                ("key", models.CharField(max_length=100, primary_key=True, serialize=False)),
                ("duration", models.DurationField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={"db_table": "headgate_retention_class", "ordering": ["key"]},
        ),
        migrations.CreateModel(
            name="QueueStoragePolicy",
            fields=[
                ("queue", models.CharField(max_length=64, primary_key=True, serialize=False)),
                ("retention", models.DurationField(blank=True, null=True)),
                ("retention_class", models.CharField(max_length=100)),
                ("cleanup_batch_limit", models.IntegerField(blank=True, null=True)),
                ("paused", models.BooleanField(default=False)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "db_table": "headgate_queue_policy",
                "ordering": ["queue"],
                "verbose_name_plural": "queue storage policies",
            },
        ),
        migrations.CreateModel(
            name="ArchivePolicy",
            fields=[
                ("queue", models.CharField(max_length=64, primary_key=True, serialize=False)),
                ("archive_retention", models.DurationField()),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "db_table": "headgate_archive_policy",
                "ordering": ["queue"],
                "verbose_name_plural": "archive policies",
            },
        ),
        migrations.CreateModel(
            name="WorkerHeartbeat",
            fields=[
                ("worker_id", models.CharField(max_length=200, primary_key=True, serialize=False)),
                ("instance_id", models.UUIDField()),
                ("hostname", models.CharField(max_length=255)),
                ("pid", models.IntegerField()),
                ("queues", models.JSONField(default=list)),
                ("started_at", models.DateTimeField()),
                ("last_heartbeat_at", models.DateTimeField()),
            ],
            options={
                "db_table": "headgate_worker_heartbeat",
                "ordering": ["worker_id"],
                "indexes": [models.Index(fields=["last_heartbeat_at"], name="headgate_heartbeat_last_idx")],
            },
        ),
        migrations.RunPython(create_builtin_classes, delete_builtin_classes),
    ]
