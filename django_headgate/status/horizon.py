"""What the ``horizon`` section of ``headgate_status`` and the admin dashboard report: the
prepared months of the archive, how many are left, and whether the edges hold rows (DESIGN §14)."""

from ..store.archive_layout import month_of_ms, prepared_layout

#: ``headgate_status`` warns when the prepared horizon ends within this many months.
HORIZON_WARNING_MONTHS = 6



def _month_index(key):
    return int(key[:4]) * 12 + int(key[4:]) - 1


def horizon_report(store, now_ms):
    """``(data, lines, warnings)`` of the prepared horizon for ``headgate_status`` and the dashboard.

    The edges are probed for one row each (never scanned); a warning comes from
    HORIZON_WARNING_MONTHS months before the horizon ends, whenever the after edge (or an edge an
    interrupted run detached) holds rows, and when the catalogue does not fit the layout."""
    ops = store.archive_horizon
    layout = prepared_layout(store.alias)
    current = "{:04d}{:02d}".format(*month_of_ms(now_ms))
    last = layout.last_month.key if layout.last_month else None
    months_left = _month_index(last) - _month_index(current) + 1 if last else 0
    warn_index = _month_index(last) - HORIZON_WARNING_MONTHS + 1 if last else None
    edges = {edge.key: ops.partition_has_rows(edge) for edge in layout.edges}
    detached = {edge.key: ops.partition_has_rows(edge) for edge in ops.detached_edges()}
    after = layout.after_edge
    warnings = []
    if last and months_left <= HORIZON_WARNING_MONTHS:
        warnings.append(f"The archive's prepared months end with {layout.last_month.label} ({max(months_left, 0)} "
                        "month(s) left): run manage.py headgate_archive_horizon --through YYYYMM "
                        "(docs/operations.md, 'The archive horizon').")
    if after and edges.get(after.key):
        warnings.append(f"{after.table_name} holds rows: they cannot be pruned by month until "
                        "manage.py headgate_archive_horizon moves them into their months.")
    if detached:
        warnings.append(f"An interrupted horizon run left the detached edge(s) {', '.join(detached)}: run "
                        "manage.py headgate_archive_horizon again with the same --through to finish the move.")
    if not layout.consistent:
        warnings.append("The archive's partitions do not all fit the prepared layout (see the log).")
    data = {"first_month": layout.first_month.key if layout.first_month else None, "last_month": last,
            "months_left": months_left,
            "warn_from": f"{warn_index // 12:04d}{warn_index % 12 + 1:02d}" if warn_index is not None else None,
            "after_edge": after.key if after else None,
            "after_edge_has_rows": bool(after and edges.get(after.key)),
            "before_edge_has_rows": bool(layout.before_edge and edges.get(layout.before_edge.key)),
            "edges_have_rows": edges, "detached_edges_have_rows": detached,
            "consistent": layout.consistent, "warning": bool(warnings)}
    if layout.months:
        line = (f"monthly partitions {layout.first_month.label} .. {layout.last_month.label} "
                f"({len(layout.months)} prepared, {months_left} month(s) left)")
    else:
        line = "no monthly partitions"
    line += "".join(f"; {key} edge {'HOLDS ROWS' if rows else 'empty'}" for key, rows in edges.items())
    line += "".join(f"; detached {key} {'holds rows' if rows else 'empty'}" for key, rows in detached.items())
    return data, [line], warnings
