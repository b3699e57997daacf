"""The skip summary at the end of every run: how many tests were skipped, grouped by reason.

pytest's ``-ra`` lists skips one location at a time; this groups them so that a reader sees at a
glance what did not run and what would make it run (e.g. the destructive archive prune tests
need ``HG_TEST_ARCHIVE_PRUNE=1``). With ``HG_SKIP_REPORT=FILE`` the same lines (``count<TAB>reason``)
go to FILE, which ``./dev test`` prints in its final summary per vendor.
"""

import os
from collections import Counter


def skip_reasons(terminalreporter):
    """Counter of skip reasons ("Skipped: " stripped) of this run's skipped tests."""
    reasons = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    return reasons


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    reasons = skip_reasons(terminalreporter)
    lines = [f"{count}\t{reason}" for reason, count in sorted(reasons.items(), key=lambda item: -item[1])]
    if reasons:
        terminalreporter.section(f"{sum(reasons.values())} skipped, by reason")
        for line in lines:
            count, reason = line.split("\t", 1)
            terminalreporter.write_line(f"{count:>4} x {reason}")
    path = os.environ.get("HG_SKIP_REPORT")
    if path:
        with open(path, "w", encoding="utf-8") as report_file:
            report_file.write("".join(f"{line}\n" for line in lines))
