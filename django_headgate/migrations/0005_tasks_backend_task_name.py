"""Tasks-backend jobs name their real Task in ``headgate_job.task``. Data only: no schema change.

Until now every job enqueued through ``HeadgateBackend`` had ``task =
django_headgate.backends.tasks.run_django_task`` (the runner), so the admin list, its task filter
and ``headgate_status`` showed that one name for all of them, and the real Task's path sat in
the payload (``kwargs["task_path"]``), hidden from staff without the payload permission. The
backend now writes the Task's own path; this migration rewrites the hot rows written before it
and recomputes their fingerprint (SHA-256 of task + arguments, what idempotent replay compares),
so a later enqueue with the same ``unique_key`` and arguments still replays the job.

Reversible: backwards, rows whose ``task`` equals their payload's ``task_path`` name the runner
again. Archived copies (``headgate_job_archive``) are audit records and are left as they were.
The rewrite runs in batches of ``BATCH`` rows; a row is a Tasks-backend row when its ``kwargs``
has exactly the payload's four keys. The canonical JSON and fingerprint rules are frozen here
(a migration must not change when the code does).
"""

import hashlib
import json

from django.db import migrations

RUNNER_PATH = "django_headgate.backends.tasks.run_django_task"
PAYLOAD_KEYS = frozenset({"task_path", "backend", "args", "kwargs"})
BATCH = 500
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)


def _fingerprint(task, args, kwargs):
    text = f"{task}\n{_CANONICAL_JSON.encode(list(args))}\n{_CANONICAL_JSON.encode(kwargs)}"
    return hashlib.sha256(text.encode()).hexdigest()


def _is_payload(kwargs):
    return (isinstance(kwargs, dict) and kwargs.keys() == PAYLOAD_KEYS
            and isinstance(kwargs["task_path"], str) and 0 < len(kwargs["task_path"]) <= 255)


def _rewrite(apps, schema_editor, *, forwards):
    Job = apps.get_model("headgate", "Job")
    jobs = Job.objects.using(schema_editor.connection.alias)
    # Forwards: the runner's rows. Backwards: rows that name the Task itself (any task other than
    # the runner; the payload check below keeps native jobs out).
    candidates = jobs.filter(task=RUNNER_PATH) if forwards else jobs.exclude(task=RUNNER_PATH).filter(
        kwargs__has_key="task_path")
    last_id = None
    while True:
        page = candidates.order_by("id").only("id", "task", "args", "kwargs", "fingerprint")
        if last_id is not None:
            page = page.filter(id__gt=last_id)
        rows = list(page[:BATCH])
        if not rows:
            return
        last_id = rows[-1].id
        changed = []
        for job in rows:
            if not _is_payload(job.kwargs):
                continue
            if forwards:
                task = job.kwargs["task_path"]
            elif job.task == job.kwargs["task_path"]:
                task = RUNNER_PATH
            else:
                continue
            job.task = task
            job.fingerprint = _fingerprint(task, job.args, job.kwargs)
            changed.append(job)
        if changed:
            jobs.bulk_update(changed, ["task", "fingerprint"])


def forwards(apps, schema_editor):
    _rewrite(apps, schema_editor, forwards=True)


def backwards(apps, schema_editor):
    _rewrite(apps, schema_editor, forwards=False)


class Migration(migrations.Migration):
    dependencies = [("headgate", "0004_retention_class_plural")]

    operations = [migrations.RunPython(forwards, backwards)]
