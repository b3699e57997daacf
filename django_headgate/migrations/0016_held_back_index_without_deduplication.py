"""PostgreSQL: ``headgate_job_held_back_idx`` keeps one index entry per row (no deduplication).

A key's held-back jobs often share their whole index key (same key, priority and run_at: one
``enqueue_many`` stamps one run_at), and PostgreSQL's B-tree deduplication packs such entries
into one posting list of up to a few hundred rows. An index entry can be marked dead only when
every row of its posting list is dead, so each hand-over re-read the rows already handed over
from the front of the list: about 110 of them per job behind one busy key. Without
deduplication each handed-over row's entry is marked dead the first time a scan passes it.
New entries are written one per row from now on; posting lists already in the index go as their
rows are handed over. PostgreSQL only: SQLite's index has no posting lists.
"""

from django.db import migrations

WITHOUT = "ALTER INDEX headgate_job_held_back_idx SET (deduplicate_items = off)"
WITH = "ALTER INDEX headgate_job_held_back_idx RESET (deduplicate_items)"


def without_deduplication(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(WITHOUT)


def with_deduplication(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(WITH)


class Migration(migrations.Migration):

    dependencies = [
        ('headgate', '0015_held_back_index'),
    ]

    operations = [
        migrations.RunPython(without_deduplication, with_deduplication, elidable=False),
    ]
