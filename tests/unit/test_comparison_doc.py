"""docs/comparison.md stays true: its speed figures are those of the latest benchmark run in
docs/benchmarks.md (the first section under "Core", its last same-round ratios), and it does not
call built features missing."""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
PEER_COLUMNS = {"vs Procrastinate 3.10.0": "procrastinate", "vs django-tasks-db 0.13.0": "django-tasks"}
FIGURES = {  # comparison row -> benchmark ratio column
    "single enqueue (one transaction each)": "single enqueue jobs/s",
    "bulk enqueue (`enqueue_many`)": "bulk enqueue jobs/s",
    "drain, 10,000 no-op jobs, concurrency 4": "drain jobs/s",
    "enqueue-to-start latency, median": "latency p50 ms",
    "enqueue-to-start latency, 95th percentile": "latency p95 ms",
}


def latest_run():
    """The text of the latest run: the first ``###`` section under ``## Core``."""
    core = (DOCS / "benchmarks.md").read_text().split("\n## Core", 1)[1]
    return core.split("\n### ", 2)[1]


def latest_ratios():
    """``{(peer, column): "N.NNx"}``: the medians of the run's last ratios table."""
    table = latest_run().rsplit("Ratios Headgate vs peer", 1)[1].split("```", 1)[0]
    lines = [line for line in table.splitlines() if line.strip()]
    header = next(line for line in lines if line.startswith("peer "))
    starts = [match.start() for match in re.finditer(r"(?<=  )\S", header)] + [None]
    columns = [header[0:starts[0]].strip()] + [header[a:b].strip() for a, b in zip(starts, starts[1:])]
    ratios = {}
    for line in lines[lines.index(header) + 2:]:
        cells = line.split()
        values = [cell for cell in cells[1:] if re.fullmatch(r"[\d.]+x|n/a", cell)]
        for column, value in zip(columns[1:], values):
            ratios[(cells[0], column)] = value
    return ratios


def comparison_rows():
    text = (DOCS / "comparison.md").read_text()
    table = text.split("## Speed", 1)[1].split("\n\n", 2)[2]
    lines = [line for line in table.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return header, {cells[0]: dict(zip(header, cells)) for cells in
                    ([cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:])}


def test_every_ratio_is_the_latest_runs():
    ratios = latest_ratios()
    header, rows = comparison_rows()
    checked = 0
    for row, column in FIGURES.items():
        for title, peer in PEER_COLUMNS.items():
            shown = rows[row][title]
            if re.fullmatch(r"[\d.]+x", shown):
                assert shown == ratios[(peer, column)], (row, title, shown)
                checked += 1
    assert checked >= 8


def test_headgate_figures_are_stated_by_the_latest_run():
    run = latest_run()
    _, rows = comparison_rows()
    for row in rows.values():
        figure = row["Headgate"]
        if figure not in ("–", ""):
            number = figure.split()[0]
            assert number in run, (row, figure)


def test_built_features_are_not_called_missing():
    text = (DOCS / "comparison.md").read_text()
    lacks = text.split("## What Headgate lacks today", 1)[1].split("\n## ", 1)[0]
    items = lacks.split("\n- ")
    for item in items:
        if "not built" in item:
            for built in ("periodic", "time limit", "abort", "rate limit", "concurrency"):
                assert built not in item.lower(), item
    assert "unique_until" in text and "--metrics-port" in text
