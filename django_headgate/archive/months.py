"""The archive month a caller names (``"YYYYMM"``), looked up in a prepared layout (DESIGN §7).

The grammar is closed: caller input is only ever *looked up* among the partitions of a layout
(``store/archive_layout.py`` builds them from the frozen pattern), never turned into a name.
:func:`parse_archive_month` takes the layout it looks in; :func:`prepared_archive_month` reads
the prepared layout of a database alias and looks a missing month up once more in the catalogue.
"""

from ..exceptions import InvalidArchiveMonth
from ..store.archive_layout import ASCII_DIGITS, MONTH_KEY_LENGTH, is_month_key, prepared_layout

INVALID_MONTH = "invalid_month"
OUTSIDE_HORIZON = "outside_horizon"


def check_month_key(value):
    """``value`` when it is exactly six ASCII digits with a month 01-12 (``str.isdigit()`` would
    accept Unicode digits such as ``"２０２６０８"``), else :class:`InvalidArchiveMonth` with
    ``reason`` ``invalid_month``. Reads nothing: a malformed month never reaches the database."""
    if not isinstance(value, str) or len(value) != MONTH_KEY_LENGTH or not set(value) <= ASCII_DIGITS:
        raise InvalidArchiveMonth(
            f"{value!r} is not an archive month: expected exactly six ASCII digits YYYYMM.",
            reason=INVALID_MONTH, month=value,
        )
    if not 1 <= int(value[4:]) <= 12:
        raise InvalidArchiveMonth(
            f"{value!r} is not an archive month: the month must be 01 to 12.",
            reason=INVALID_MONTH, month=value,
        )
    return value


def parse_archive_month(value, layout):
    """The :class:`~django_headgate.store.archive_layout.ArchivePartition` of the month
    ``"YYYYMM"`` in ``layout``: :func:`check_month_key`, then a month of ``layout`` (the edges are
    not months), else :class:`InvalidArchiveMonth` with ``reason`` ``outside_horizon``."""
    partition = layout.months_by_key.get(check_month_key(value))
    if partition is None:
        prepared = (f"{layout.first_month.key} to {layout.last_month.key}" if layout.months
                    else "none prepared")
        raise InvalidArchiveMonth(
            f"{value!r} is not a prepared archive month ({prepared}); the edge partitions cannot "
            "be pruned by month (manage.py headgate_archive_horizon prepares later months).",
            reason=OUTSIDE_HORIZON, month=value,
        )
    return partition


def prepared_archive_month(value, using=None):
    """:func:`parse_archive_month` in the prepared layout of ``using`` (default: HEADGATE's), read
    only once the month is well-formed. A month missing from the cached layout is looked up once
    more in the catalogue: another process may have prepared it since."""
    check_month_key(value)
    try:
        return parse_archive_month(value, prepared_layout(using))
    except InvalidArchiveMonth:
        if not is_month_key(value):
            raise
    return parse_archive_month(value, prepared_layout(using, refresh=True))
