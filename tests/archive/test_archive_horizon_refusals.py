"""headgate_archive_horizon refuses bad targets before any DDL, and explains SQLite (not destructive)."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from django_headgate.archive.horizon import horizon_privilege_findings
from django_headgate.store.archive_layout import FROZEN_LAYOUT, prepared_layout
from django_headgate.conf import validate_settings


def horizon(*args):
    out = StringIO()
    call_command("headgate_archive_horizon", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize(("target", "reason"), [
    ("2032-12", "invalid_target"), ("203213", "invalid_target"), ("２０３２１２", "invalid_target"),
    ("203212; DROP TABLE headgate_job", "invalid_target"), ("210001", "beyond_maximum"),
    ("203012", "before_horizon"), ("202501", "before_horizon"),
])
def test_a_bad_target_is_refused_and_nothing_changes(vendor, target, reason):
    if vendor == "sqlite" and reason == "before_horizon":
        pytest.skip("SQLite has no horizon to be before.")
    with pytest.raises(CommandError) as refused:
        horizon("--through", target)
    assert refused.value.returncode == 1
    assert str(refused.value).startswith(f"refused ({reason}):")
    assert prepared_layout() == FROZEN_LAYOUT


@pytest.mark.django_db
def test_sqlite_explains_it_has_nothing_to_do(vendor):
    if vendor != "sqlite":
        pytest.skip("SQLite only.")
    assert "Nothing to do" in horizon("--through", "203312")
    assert "Nothing to do" in horizon("--detach-pruned-before", "202601")


@pytest.mark.django_db
def test_the_same_target_as_the_prepared_horizon_is_a_no_op(vendor):
    if vendor == "sqlite":
        pytest.skip("SQLite has no partitions.")
    assert "Nothing to do: the archive is prepared through 203112." in horizon("--through", "203112")
    assert "Nothing to do" in horizon("--through", "203101")  # the horizon grows by whole years


@pytest.mark.django_db
def test_the_test_role_owns_the_archive(vendor):
    assert horizon_privilege_findings() == []


def test_the_horizon_settings_are_validated():
    values, errors = validate_settings({"ARCHIVE_HORIZON": {"ENABLED": "yes", "LOOKAHEAD_MONTHS": 0}})
    assert sorted(name for name, _ in errors) == [
        "HEADGATE['ARCHIVE_HORIZON']['ENABLED']", "HEADGATE['ARCHIVE_HORIZON']['LOOKAHEAD_MONTHS']"]
    values, errors = validate_settings({})
    assert errors == [] and (values["archive_horizon_enabled"], values["archive_horizon_lookahead_months"]) == (False, 24)


@pytest.mark.django_db
def test_the_horizon_duty_is_off_by_default_and_one_extension_per_pass(store):
    from django_headgate.conf import get_settings
    from django_headgate.maintenance.archive_horizon import ArchiveHorizonDuty

    duty = ArchiveHorizonDuty(store, get_settings())
    assert not duty.enabled
    assert (duty.interval, duty.batch_size, duty.max_batches, duty.batch_timeout) == (86400.0, 1, 1, 10.0)
