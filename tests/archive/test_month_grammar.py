"""The closed month grammar of prune_archive_month: every malformed id is refused before SQL."""

import pytest

from django_headgate.archive_months import (
    AFTER_EDGE,
    BEFORE_EDGE,
    MONTHS,
    PARTITIONS,
    parse_archive_month,
    partition_for_ms,
)
from django_headgate.exceptions import ArchivePruneRefused, InvalidArchiveMonth

MALFORMED = [
    "", "2026", "2026081", "20260", "2026-08", "2026_08", " 202608", "202608 ", "202608\n",
    "２０２６０８",  # full-width digits: str.isdigit() is True for them
    "٢٠٢٦٠٨",  # Arabic-Indic digits
    "2026٠8",
    "202600", "202613", "202699", "000000",
    "before_2025", "after_2031", "p202608", "headgate_job_archive_202608",
    "202608; DROP TABLE headgate_job", "202608'--", "2026' OR '1'='1",
    None, 202608, b"202608", ["202608"],
]
OUTSIDE = ["202412", "202001", "203201", "999912", "100001"]


@pytest.mark.parametrize("month", MALFORMED)
def test_malformed_month_is_invalid(month):
    with pytest.raises(InvalidArchiveMonth) as refused:
        parse_archive_month(month)
    assert refused.value.reason == "invalid_month"
    assert isinstance(refused.value, ArchivePruneRefused)


@pytest.mark.parametrize("month", OUTSIDE)
def test_month_outside_the_horizon(month):
    with pytest.raises(InvalidArchiveMonth) as refused:
        parse_archive_month(month)
    assert refused.value.reason == "outside_horizon"


def test_horizon_months_parse_to_their_partition():
    first, last = parse_archive_month("202501"), parse_archive_month("203112")
    assert (first.table_name, first.partition_name) == ("headgate_job_archive_202501", "p202501")
    assert (last.table_name, last.partition_name) == ("headgate_job_archive_203112", "p203112")
    assert first.start_ms == 1735689600000  # 2025-01-01T00:00:00Z
    assert last.end_ms == 1956528000000  # 2032-01-01T00:00:00Z
    leap_february = parse_archive_month("202802")
    assert leap_february.end_ms - leap_february.start_ms == 29 * 86_400_000


def test_partitions_tile_the_number_line():
    assert len(MONTHS) == 84 and PARTITIONS[0] is BEFORE_EDGE and PARTITIONS[-1] is AFTER_EDGE
    assert BEFORE_EDGE.start_ms is None and AFTER_EDGE.end_ms is None
    for previous, current in zip(PARTITIONS, PARTITIONS[1:]):
        assert previous.end_ms == current.start_ms
    assert not any(month.is_edge for month in MONTHS)


def test_partition_for_ms_at_the_boundaries():
    month = parse_archive_month("202608")
    assert partition_for_ms(month.start_ms) is month
    assert partition_for_ms(month.end_ms - 1) is month
    assert partition_for_ms(month.end_ms).key == "202609"
    assert partition_for_ms(BEFORE_EDGE.end_ms - 1) is BEFORE_EDGE
    assert partition_for_ms(AFTER_EDGE.start_ms) is AFTER_EDGE
