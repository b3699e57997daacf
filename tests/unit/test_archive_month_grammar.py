"""The closed month grammar of prune_archive_month (against the frozen layout: no database here)."""

import pytest

from django_headgate.store.archive_layout import (
    AFTER_EDGE,
    BEFORE_EDGE,
    FROZEN_LAYOUT,
    MONTHS,
    PARTITIONS,
    partition_for_ms,
)
from django_headgate.archive.months import parse_archive_month
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
        parse_archive_month(month, FROZEN_LAYOUT)
    assert refused.value.reason == "invalid_month"
    assert isinstance(refused.value, ArchivePruneRefused)


@pytest.mark.parametrize("month", OUTSIDE)
def test_month_outside_the_horizon(month):
    with pytest.raises(InvalidArchiveMonth) as refused:
        parse_archive_month(month, FROZEN_LAYOUT)
    assert refused.value.reason == "outside_horizon"


def test_horizon_months_parse_to_their_partition():
    first, last = parse_archive_month("202501", FROZEN_LAYOUT), parse_archive_month("203112", FROZEN_LAYOUT)
    assert (first.table_name, first.partition_name) == ("headgate_job_archive_202501", "p202501")
    assert (last.table_name, last.partition_name) == ("headgate_job_archive_203112", "p203112")
    assert first.start_ms == 1735689600000  # 2025-01-01T00:00:00Z
    assert last.end_ms == 1956528000000  # 2032-01-01T00:00:00Z
    leap_february = parse_archive_month("202802", FROZEN_LAYOUT)
    assert leap_february.end_ms - leap_february.start_ms == 29 * 86_400_000


def test_partitions_tile_the_number_line():
    assert len(MONTHS) == 84 and PARTITIONS[0] is BEFORE_EDGE and PARTITIONS[-1] is AFTER_EDGE
    assert BEFORE_EDGE.start_ms is None and AFTER_EDGE.end_ms is None
    for previous, current in zip(PARTITIONS, PARTITIONS[1:]):
        assert previous.end_ms == current.start_ms
    assert not any(month.is_edge for month in MONTHS)


def test_partition_for_ms_at_the_boundaries():
    month = parse_archive_month("202608", FROZEN_LAYOUT)
    assert partition_for_ms(month.start_ms) is month
    assert partition_for_ms(month.end_ms - 1) is month
    assert partition_for_ms(month.end_ms).key == "202609"
    assert partition_for_ms(BEFORE_EDGE.end_ms - 1) is BEFORE_EDGE
    assert partition_for_ms(AFTER_EDGE.start_ms) is AFTER_EDGE


def catalogue(months, edge_year=2031, *, vendor_names="table_name"):
    """Catalogue entries of a layout: the before edge, ``months`` and the edge after ``edge_year``."""
    from django_headgate.store.archive_layout import after_edge

    edge = after_edge(edge_year)
    parts = [BEFORE_EDGE, *months, edge]
    return [(getattr(p, vendor_names), p.start_ms, p.end_ms) for p in parts]


def test_a_catalogue_with_later_months_extends_the_closed_set():
    from django_headgate.store.archive_layout import layout_from_catalog, months_between

    extra = months_between((2032, 1), (2033, 12))
    layout = layout_from_catalog(catalogue(MONTHS + extra, 2033), "table_name")
    assert layout.consistent and layout.last_month.key == "203312" and layout.after_edge.key == "after_2033"
    assert parse_archive_month("203203", layout).table_name == "headgate_job_archive_203203"
    assert layout.partition_for_ms(extra[-1].end_ms) is layout.after_edge
    with pytest.raises(InvalidArchiveMonth):
        parse_archive_month("203401", layout)


def test_a_catalogue_name_counts_only_with_the_frozen_pattern_and_its_months_bounds():
    from django_headgate.store.archive_layout import layout_from_catalog, month_partition

    wrong_bounds = month_partition(2032, 1)
    entries = catalogue(MONTHS) + [
        ("headgate_job_archive_203201", wrong_bounds.start_ms + 1, wrong_bounds.end_ms),
        ("headgate_job_archive_2032O2", 1, 2),  # a letter O
        ("headgate_job_archive_203213", 1, 2),
        ('headgate_job_archive_203203"; DROP TABLE x; --', 1, 2),
    ]
    layout = layout_from_catalog(entries, "table_name")
    assert not layout.consistent
    assert [m.key for m in layout.months] == [m.key for m in MONTHS]


def test_a_mysql_month_after_a_retired_range_still_counts():
    from django_headgate.store.archive_layout import layout_from_catalog

    entries = catalogue(MONTHS, vendor_names="partition_name")
    del entries[1]  # p202501 dropped: p202502 now starts where p202501 started
    entries[1] = (entries[1][0], BEFORE_EDGE.end_ms, entries[1][2])
    layout = layout_from_catalog(entries, "partition_name")
    assert layout.consistent and layout.first_month.key == "202502"
