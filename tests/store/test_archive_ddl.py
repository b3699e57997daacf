"""The archive's hand-written DDL agrees with ``ArchivedJob``: the one schema ``makemigrations
--check`` cannot see (migration 0002 creates it by RunPython, with the model state kept apart).

The migrated test database's ``headgate_job_archive`` is compared, through the vendor's own
introspection, with the table Django makes from ``ArchivedJob``'s fields (created for the test
under another name and dropped): same columns, and per column the same type, size, nullability
and default or generated expression, as far as the vendor reports them. The horizon code
(``store/*/archive_horizon.py``) adds partitions that take the parent's columns (PostgreSQL
``PARTITION OF``, MySQL/MariaDB partitions of the one table) and names columns only through
``ARCHIVE_COLUMNS``, the list its row move and the sweep's copy write: that list is compared too.
"""

import pytest
from django.apps.registry import Apps
from django.db import connection, models

from django_headgate.store.archive_layout import ARCHIVE_TABLE
from django_headgate.models import ArchivedJob
from django_headgate.store.fragments import ARCHIVE_COLUMNS

#: A table made by Django from the model's fields, for the comparison only.
MODEL_TABLE = "headgate_test_archive_as_modelled"
#: The database primary key is (archive_id, evicted_at_ms) where the model says archive_id
#: (migration 0002 explains why): SQLite reports a column's part in the key; it is not compared.
NOT_COMPARED = {"pk"}


def model_as_django_makes_it():
    """A model with ``ArchivedJob``'s concrete fields on :data:`MODEL_TABLE`, in an app registry
    of its own (the project's registry never sees it)."""
    meta = type("Meta", (), {"app_label": "headgate", "db_table": MODEL_TABLE, "apps": Apps()})
    fields = {field.name: field.clone() for field in ArchivedJob._meta.concrete_fields}
    return type("ArchivedJobAsModelled", (models.Model,), {"__module__": __name__, "Meta": meta, **fields})


def columns(table):
    """``{column: what the vendor's introspection reports of it}``."""
    introspection = connection.introspection
    with connection.cursor() as cursor:
        described = introspection.get_table_description(cursor, table)
    return {info.name: {"field_type": introspection.get_field_type(info.type_code, info),
                        **{key: value for key, value in info._asdict().items() if key not in NOT_COMPARED}}
            for info in described}


@pytest.fixture
def modelled_columns():
    model = model_as_django_makes_it()
    with connection.schema_editor() as editor:
        editor.create_model(model)
    try:
        yield columns(MODEL_TABLE)
    finally:
        with connection.schema_editor() as editor:
            editor.delete_model(model)


@pytest.mark.django_db(transaction=True)  # DDL (MariaDB commits it)
def test_the_archive_ddl_has_the_models_columns(modelled_columns):
    migrated = columns(ARCHIVE_TABLE)
    assert {"only in the DDL": sorted(migrated.keys() - modelled_columns.keys()),
            "only in ArchivedJob": sorted(modelled_columns.keys() - migrated.keys())} == \
        {"only in the DDL": [], "only in ArchivedJob": []}
    differing = {f"{name}.{key}": {"ddl": value, "model": modelled_columns[name][key]}
                 for name in migrated for key, value in migrated[name].items()
                 if value != modelled_columns[name][key]}
    assert differing == {}


def test_the_archive_copy_and_move_write_every_stored_column():
    stored = [field.column for field in ArchivedJob._meta.concrete_fields
              if not isinstance(field, models.GeneratedField)]
    assert sorted(ARCHIVE_COLUMNS.split(", ")) == sorted(stored)


@pytest.mark.django_db(transaction=True)
def test_the_held_table_has_the_archives_columns():
    """A prune moves held rows with ``ARCHIVE_COLUMNS`` into ``headgate_job_archive_held``
    (migration 0011): the two tables must agree column for column, as the vendor reports them."""
    archive, held = columns(ARCHIVE_TABLE), columns("headgate_job_archive_held")
    assert sorted(held) == sorted(archive)
    differing = {name: {"archive": archive[name], "held": held[name]} for name in archive
                 if {k: v for k, v in archive[name].items() if k != "name"}
                 != {k: v for k, v in held[name].items() if k != "name"}}
    assert differing == {}
