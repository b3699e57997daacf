"""The optional archive prune duty (destructive: HG_TEST_ARCHIVE_PRUNE=1 only)."""

import os

import pytest

from django_headgate.conf import get_settings
from django_headgate.maintenance.archive_prune import ArchivePruneDuty
from django_headgate.maintenance.runner import DUTIES, MaintenanceRunner

from tests.support.archive_rows import DAY_MS, archive_rows, rows_in

pytestmark = [
    pytest.mark.archive_prune,
    pytest.mark.skipif(os.environ.get("HG_TEST_ARCHIVE_PRUNE") != "1",
                       reason="destructive archive prune tests need HG_TEST_ARCHIVE_PRUNE=1"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def enabled(settings):
    settings.HEADGATE = {**settings.HEADGATE, "ARCHIVE_PRUNE": {"ENABLED": True}}


def test_off_by_default(store):
    duty = ArchivePruneDuty(store, get_settings())
    assert ArchivePruneDuty in DUTIES and not duty.enabled
    archive_rows("202501", 2)
    assert "archive_prune" not in [o.duty for o in MaintenanceRunner(get_settings()).run_once()]
    assert rows_in("202501") == 2


def test_prunes_every_expired_closed_month_and_nothing_else(store, enabled):
    archive_rows("202501", 3)
    archive_rows("202509", 2)
    archive_rows("202510", 2)
    archive_rows("202510", 1, retention_ms=36500 * DAY_MS)
    duty = ArchivePruneDuty(store, get_settings())
    assert (duty.interval, duty.enabled) == (3600.0, True)
    outcome = duty.run_once()
    assert (outcome.status, outcome.rows, outcome.batches) == ("pruned", 2, 1)
    assert [rows_in(m) for m in ("202501", "202509", "202510")] == [0, 0, 3]
    again = ArchivePruneDuty(store, get_settings()).run_once()
    assert (again.status, again.rows) == ("zero_or_contended", 0)
