"""The core benchmark (issue 2): Headgate against Procrastinate, django-tasks' DatabaseBackend and
a raw-SQL floor, each on its own fresh database of the same PostgreSQL server, in one run.

Run it through ``bench/run`` (it builds bench/.venv-peers first). Each system is measured by its
own module in a subprocess that writes JSON; this script creates and drops the databases, runs
the rounds, then prints the figures, the ratios and the design targets and writes them all to
bench/results/<timestamp>.json. See bench/README.md for what each figure means.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from bench.common import ROOT, bench_env, log, median

RESULTS_DIR = ROOT / "bench" / "results"
# The run's process id in every name, so that two runs on one server never drop each other's.
DB_PREFIX = f"hgbench_core_{os.getpid()}_"
SYSTEM_TIMEOUT_S = 1800

# Design targets of issue 2 (Headgate on PostgreSQL): (metric, comparison, value, label).
TARGETS = (
    ("drain", ">=", 2000.0, "drain >= 2,000 jobs/s"),
    ("single", ">=", 1800.0, "single enqueue >= 1,800 jobs/s"),
    ("bulk", ">=", 40000.0, "enqueue_many >= 40,000 jobs/s"),
    ("latency_p50", "<=", 5.0, "median latency <= 5 ms"),
)
# Targets of issue 9 (worker v2): (system, metric or (peer, ratio metric), comparison, value, label).
# A ratio is read from the same-round ratios (median); a plain metric from the system's figures.
V2_TARGETS = (
    ("headgate", ("raw-sql-50", "drain"), ">=", 0.4, "v2: drain >= 0.4x the raw claim-50 floor"),
    ("headgate", ("procrastinate", "drain"), ">=", 10.0, "v2: drain >= 10x Procrastinate (c=4)"),
    ("headgate", "drain_cpu", "<=", 0.1, "v2: worker CPU <= 0.1 ms/job"),
    ("headgate", "two_vs_one", ">=", 1.7, "v2: two processes >= 1.7x one"),
    ("headgate", "latency_p50", "<=", 2.0, "v2: PostgreSQL latency p50 <= 2 ms"),
    ("headgate", "latency_p95", "<=", 5.0, "v2: PostgreSQL latency p95 <= 5 ms"),
    ("headgate", ("raw-sql-notify", "single"), ">=", 0.8, "v2: single enqueue >= 0.8x raw INSERT + NOTIFY"),
    ("headgate", ("raw-sql-copy", "bulk"), ">=", 0.5, "v2: enqueue_many >= 0.5x raw COPY"),
    ("headgate-mysql", ("raw-sql-mysql-50", "drain"), ">=", 0.3, "v2: MariaDB drain >= 0.3x its raw claim-50 floor"),
    ("headgate-mysql", "latency_p50", "<=", 25.0, "v2: MariaDB latency p50 <= 25 ms"),
    ("headgate-sqlite", "latency_p50", "<=", 25.0, "v2: SQLite latency p50 <= 25 ms"),
)
# Targets of issue 25 (performance v3): (system, metric, peer, peer metric, comparison, value,
# label). The value is system's metric over peer's metric in each round (latency too: Headgate's
# p50 over the floor's), then the median of the rounds.
V3_TARGETS = (
    ("headgate", "drain", "raw-sql-50", "drain", ">=", 0.55, "v3: drain >= 0.55x the raw claim-50 floor"),
    ("headgate", "drain_backlog", "headgate", "drain", ">=", 0.9,
     "v3: drain behind a finished backlog >= 0.9x the plain drain"),
    ("headgate", "two_vs_one", "raw-sql-50", "two_vs_one", ">=", 0.95,
     "v3: two processes >= 0.95x the raw claim-50 floor's own two-process ratio"),
    ("headgate", "single", "raw-sql-notify", "single", ">=", 0.85, "v3: single enqueue >= 0.85x raw INSERT + NOTIFY"),
    ("headgate", "bulk", "raw-sql-copy-same", "bulk", ">=", 0.85, "v3: enqueue_many >= 0.85x the same-row COPY"),
    ("headgate", "bulk", "raw-sql-copy2", "bulk", ">=", 0.35, "v3: enqueue_many >= 0.35x the two-column COPY"),
    ("headgate", "latency_p50", "raw-sql-listen", "latency_p50", "<=", 1.3,
     "v3: latency p50 <= 1.3x the LISTEN/NOTIFY floor's"),
    ("headgate-mysql", "drain", "raw-sql-mysql-50", "drain", ">=", 0.5,
     "v3: MariaDB drain >= 0.5x its raw claim-50 floor"),
)

# Figures of the table: key, heading, format, whether higher is better (None: no ratio).
METRICS = (
    ("single", "single enqueue jobs/s", "{:,.0f}", True),
    ("bulk", "bulk enqueue jobs/s", "{:,.0f}", True),
    ("drain", "drain jobs/s", "{:,.0f}", True),
    ("drain_cold", "drain jobs/s, no ANALYZE", "{:,.0f}", None),
    ("drain_wall", "drain wall s", "{:,.1f}", None),
    ("drain_cpu", "worker CPU ms/job", "{:,.2f}", None),
    ("drain_two", "drain jobs/s, 2 processes", "{:,.0f}", None),
    ("two_vs_one", "2 processes / 1", "{:,.2f}", None),
    ("drain_backlog", "drain jobs/s, backlog", "{:,.0f}", None),
    ("backlog_vs_plain", "backlog / plain drain", "{:,.2f}", None),
    ("drain_busy", "busy cores, drain", "{:,.1f}", None),
    ("drain_two_busy", "busy cores, 2 processes", "{:,.1f}", None),
    ("latency_p50", "latency p50 ms", "{:,.1f}", False),
    ("latency_p95", "latency p95 ms", "{:,.1f}", False),
)
PEERS = ("procrastinate", "django-tasks", "raw-sql-1", "raw-sql-50", "raw-sql-notify", "raw-sql-copy",
         "raw-sql-copy-same", "raw-sql-copy2", "raw-sql-listen")
# Same-round ratios besides Headgate on PostgreSQL against PEERS: (our system, its floor).
OTHER_PAIRS = (("headgate-mysql", "raw-sql-mysql-50"), ("headgate-sqlite", "raw-sql-sqlite-50"))


# -- databases --------------------------------------------------------------------------------

def with_database(server_url, name):
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", "", ""))


def pg_admin(server_url, statement):
    with psycopg.connect(with_database(server_url, "postgres"), autocommit=True) as connection:
        connection.execute(statement)


def mysql_admin(server_url, statement):
    import MySQLdb

    parts = urlsplit(server_url)
    connection = MySQLdb.connect(host=parts.hostname, port=parts.port or 3306, user=parts.username or "root",
                                 password=parts.password or "")
    try:
        connection.cursor().execute(statement)
    finally:
        connection.close()


class FreshDatabase:
    """A database of our own for one system's measurements, dropped afterwards (names are ours:
    a fixed prefix plus a closed set of system names)."""

    def __init__(self, vendor, server_url, system):
        self.vendor = vendor
        self.server_url = server_url
        self.name = DB_PREFIX + system.replace("-", "_")
        self.tmpdir = None

    def __enter__(self):
        if self.vendor == "postgresql":
            pg_admin(self.server_url, f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            pg_admin(self.server_url, f'CREATE DATABASE "{self.name}"')
            return with_database(self.server_url, self.name)
        if self.vendor == "mysql":
            mysql_admin(self.server_url, f"DROP DATABASE IF EXISTS `{self.name}`")
            mysql_admin(self.server_url, f"CREATE DATABASE `{self.name}` CHARACTER SET utf8mb4")
            return with_database(self.server_url, self.name)
        self.tmpdir = tempfile.TemporaryDirectory(prefix=DB_PREFIX)
        return f"sqlite:///{self.tmpdir.name}/{self.name}.sqlite3"

    def __exit__(self, *exc):
        if self.vendor == "postgresql":
            pg_admin(self.server_url, f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        elif self.vendor == "mysql":
            mysql_admin(self.server_url, f"DROP DATABASE IF EXISTS `{self.name}`")
        else:
            self.tmpdir.cleanup()


# -- running one system -----------------------------------------------------------------------

def run_module(python, module, args, env):
    """Run ``python -m module args --out FILE``; return the JSON it wrote."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([python, "-m", module, *args, "--out", out.name], env=env, cwd=ROOT,
                       check=True, timeout=SYSTEM_TIMEOUT_S)
        return json.loads(Path(out.name).read_text())


def size_args(opts, drain=None, bulk=True, latency=True):
    args = ["--single", str(opts.single), "--drain", str(drain or opts.drain)]
    if bulk:
        args += ["--bulk", str(opts.bulk)]
    if latency:
        args += ["--latency-samples", str(opts.latency_samples), "--spacing", str(opts.spacing)]
    return args


def measure_headgate(opts, vendor, server_url):
    system = "headgate" if vendor == "postgresql" else f"headgate-{vendor}"
    backlog = ["--backlog-rows", str(opts.backlog_rows), "--backlog-drain", str(opts.backlog_drain)]
    with FreshDatabase(vendor, server_url, system) as url:
        raw = run_module(sys.executable, "bench.headgate_bench",
                         ["--database-url", url, "--concurrency", str(opts.concurrency), *size_args(opts),
                          "--two-processes", *(backlog if opts.backlog_case else [])],
                         bench_env())
    found = {system: flatten(raw)}
    if raw.get("bulk_copy_same"):  # PostgreSQL: measured in Headgate's process, on its table
        found["raw-sql-copy-same"] = {"bulk": raw["bulk_copy_same"]["jobs_per_s"]}
    return found


def measure_peers(opts):
    found = {}
    with FreshDatabase("postgresql", opts.postgres_url, "procrastinate") as url:
        raw = run_module(opts.peers_python, "bench.procrastinate_bench",
                         ["measure", "--concurrency", str(opts.concurrency), *size_args(opts)],
                         bench_env(PROCRASTINATE_BENCH_DSN=url))
        found["procrastinate"] = flatten(raw)
    with FreshDatabase("postgresql", opts.postgres_url, "djtasks") as url:
        raw = run_module(opts.peers_python, "bench.djtasks_bench",
                         size_args(opts, drain=opts.djtasks_drain, bulk=False),
                         bench_env(DJTASKS_BENCH_DATABASE_URL=url))
        found["django-tasks"] = flatten(raw)
    with FreshDatabase("postgresql", opts.postgres_url, "raw") as url:
        raw = run_module(opts.peers_python, "bench.rawsql_bench", size_args(opts),
                         bench_env(RAWSQL_BENCH_DSN=url))
        found.update(rawsql_figures(raw))
    if "mysql" in opts.vendors:
        with FreshDatabase("mysql", opts.mysql_url, "raw_mysql") as url:
            raw = run_module(sys.executable, "bench.rawsql_mysql_bench",
                             ["--database-url", url, "--drain", str(opts.drain)], bench_env())
        found["raw-sql-mysql-50"] = {"drain": raw["drain_claim_50"]["jobs_per_s"], "raw": raw}
    if "sqlite" in opts.vendors:
        with FreshDatabase("sqlite", None, "raw_sqlite") as url:
            raw = run_module(sys.executable, "bench.rawsql_sqlite_bench",
                             ["--database-path", url.removeprefix("sqlite:///"), "--drain", str(opts.drain)],
                             bench_env())
        found["raw-sql-sqlite-50"] = {"drain": raw["drain_claim_50"]["jobs_per_s"], "raw": raw}
    return found


def rawsql_figures(raw):
    """The rows of bench/rawsql_bench.py's figures: one per floor."""
    two = raw["drain_claim_50_two"]
    return {
        "raw-sql-1": {"single": raw["single_enqueue"]["jobs_per_s"], "drain": raw["drain_claim_1"]["jobs_per_s"],
                      "raw": raw},
        "raw-sql-50": {"bulk": raw["bulk_enqueue"]["jobs_per_s"], "drain": raw["drain_claim_50"]["jobs_per_s"],
                       "drain_two": two["jobs_per_s"], "two_vs_one": two["two_vs_one"]},
        "raw-sql-notify": {"single": raw["single_enqueue_notify"]["jobs_per_s"]},
        "raw-sql-copy": {"bulk": raw["bulk_copy"]["jobs_per_s"]},
        "raw-sql-copy2": {"bulk": raw["bulk_copy2"]["jobs_per_s"]},
        "raw-sql-listen": {"latency_p50": raw["latency_listen"]["median_ms"],
                           "latency_p95": raw["latency_listen"]["p95_ms"]},
    }


def flatten(raw):
    """The table's figures of one system's JSON (None where the system has no such operation)."""
    figures = {"raw": raw}
    figures["single"] = raw["single_enqueue"]["jobs_per_s"]
    figures["bulk"] = raw["bulk_enqueue"]["jobs_per_s"] if raw.get("bulk_enqueue") else None
    figures["drain"] = raw["drain"]["jobs_per_s"]
    figures["drain_wall"] = raw["drain"]["wall_seconds"]
    figures["drain_cpu"] = raw["drain"]["worker_cpu_ms_per_job"]
    figures["drain_cold"] = raw["drain_cold"]["jobs_per_s"] if raw.get("drain_cold") else None
    figures["drain_two"] = raw["drain_two"]["jobs_per_s"] if raw.get("drain_two") else None
    figures["two_vs_one"] = (figures["drain_two"] / figures["drain"]
                             if figures["drain_two"] and figures["drain"] else None)
    # The machine's busy cores (workers, database server, the rest) during the drains: when one
    # process keeps every core busy, a second cannot add throughput.
    figures["drain_busy"] = raw["drain"].get("machine_busy_cores")
    figures["drain_two_busy"] = raw["drain_two"].get("machine_busy_cores") if raw.get("drain_two") else None
    figures["drain_backlog"] = raw["drain_backlog"]["jobs_per_s"] if raw.get("drain_backlog") else None
    figures["backlog_vs_plain"] = (figures["drain_backlog"] / figures["drain"]
                                   if figures["drain_backlog"] and figures["drain"] else None)
    figures["latency_p50"] = raw["latency"]["median_ms"]
    figures["latency_p95"] = raw["latency"]["p95_ms"]
    for drain in (raw["drain"], raw.get("drain_cold"), raw.get("drain_two"), raw.get("drain_backlog")):
        if drain and drain["succeeded"] != drain["jobs"]:
            raise RuntimeError(f"{raw['system']}: only {drain['succeeded']} of {drain['jobs']} jobs succeeded")
    return figures


# -- summary ----------------------------------------------------------------------------------

def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": median(values), "min": min(values), "max": max(values), "n": len(values)}


def summarise(rounds):
    systems = []
    for found in rounds:
        systems += [name for name in found if name not in systems]
    summary = {name: {key: spread([r.get(name, {}).get(key) for r in rounds]) for key, *_ in METRICS}
               for name in systems}
    ratios = {}
    for system, peer in [("headgate", peer) for peer in PEERS] + list(OTHER_PAIRS):
        per_metric = {}
        for key, _, _, higher_is_better in METRICS:
            if higher_is_better is None:
                continue
            values = []
            for found in rounds:
                ours, theirs = found.get(system, {}).get(key), found.get(peer, {}).get(key)
                if ours and theirs:
                    values.append(ours / theirs if higher_is_better else theirs / ours)
            per_metric[key] = spread(values)
        if any(per_metric.values()):
            ratios[peer if system == "headgate" else f"{system} / {peer}"] = per_metric
    return summary, ratios


def round_quotients(rounds, system, metric, peer, peer_metric):
    """system's metric over peer's in each round where both were measured: their spread."""
    values = []
    for found in rounds:
        ours, theirs = found.get(system, {}).get(metric), found.get(peer, {}).get(peer_metric)
        if ours and theirs:
            values.append(ours / theirs)
    return spread(values)


def check_targets(summary, ratios, rounds):
    checked = []
    ours = summary.get("headgate")
    for key, comparison, target, label in TARGETS if ours else ():
        value = ours[key]["median"] if ours.get(key) else None
        met = value is not None and (value >= target if comparison == ">=" else value <= target)
        checked.append({"target": label, "metric": key, "value": value, "met": met})
    for system, key, comparison, target, label in V2_TARGETS:
        if isinstance(key, tuple):
            peer, metric = key
            stats = ratios.get(peer if system == "headgate" else f"{system} / {peer}", {}).get(metric)
        else:
            stats = summary.get(system, {}).get(key)
        if stats is None:
            continue  # not measured in this run (vendor or peers left out)
        value = stats["median"]
        met = value >= target if comparison == ">=" else value <= target
        checked.append({"target": label, "metric": str(key), "value": value, "met": met})
    for system, metric, peer, peer_metric, comparison, target, label in V3_TARGETS:
        stats = round_quotients(rounds, system, metric, peer, peer_metric)
        value = stats["median"] if stats else None
        met = None if value is None else (value >= target if comparison == ">=" else value <= target)
        checked.append({"target": label, "metric": f"{system} {metric} / {peer} {peer_metric}", "value": value,
                        "met": met})
    return checked


def cell(stats, fmt):
    if stats is None:
        return "n/a"
    text = fmt.format(stats["median"])
    if stats["n"] > 1:
        text += f" ({fmt.format(stats['min'])}-{fmt.format(stats['max'])})"
    return text


def render(summary, ratios, targets, rounds):
    lines = [f"Figures: median of {rounds} round(s) (min-max)"]
    headings = ["system"] + [heading for _, heading, *_ in METRICS]
    rows = [[name] + [cell(figures[key], fmt) for key, _, fmt, _ in METRICS] for name, figures in summary.items()]
    lines += table(headings, rows)
    if ratios:
        lines += ["", "Ratios Headgate vs peer, per round then median (min-max); > 1 means Headgate is better",
                  "(throughput: Headgate / peer; latency: peer / Headgate)"]
        ratio_metrics = [(key, heading) for key, heading, _, better in METRICS if better is not None]
        rows = [[peer] + [cell(values[key], "{:.2f}x") for key, _ in ratio_metrics] for peer, values in ratios.items()]
        lines += table(["peer"] + [heading for _, heading in ratio_metrics], rows)
    if targets:
        lines += ["", "Design targets (issue 2: Headgate on PostgreSQL; v2: issue 9; v3: issue 25, same-round "
                  "quotients), medians"]
        rows = [[t["target"], "n/a" if t["value"] is None else f"{t['value']:,.2f}",
                 "not measured" if t["met"] is None else "met" if t["met"] else "MISSED"] for t in targets]
        lines += table(["target", "measured", ""], rows)
    return "\n".join(lines)


def table(headings, rows):
    widths = [max(len(str(row[i])) for row in [headings] + rows) for i in range(len(headings))]
    out = ["  ".join(str(h).ljust(w) for h, w in zip(headings, widths))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in rows]
    return out


# -- main -------------------------------------------------------------------------------------

def machine_facts(opts):
    facts = {"nproc": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
             "loadavg_start": os.getloadavg()}
    with psycopg.connect(with_database(opts.postgres_url, "postgres")) as connection:
        facts["postgresql"] = connection.execute("SHOW server_version").fetchone()[0]
        facts["synchronous_commit"] = connection.execute("SHOW synchronous_commit").fetchone()[0]
    return facts


def parse_args():
    parser = argparse.ArgumentParser(description="Headgate core benchmark (see bench/README.md).")
    parser.add_argument("--rounds", type=int, default=3, help="Full rounds of every system (default 3).")
    parser.add_argument("--vendors", default="postgresql",
                        help="Comma-separated vendors for Headgate: postgresql, mysql, sqlite (peers: PostgreSQL only).")
    parser.add_argument("--no-peers", action="store_true", help="Measure Headgate only.")
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--mysql-url", default="mysql://root@127.0.0.1:3306")
    parser.add_argument("--peers-python", default=str(ROOT / "bench" / ".venv-peers" / "bin" / "python"))
    parser.add_argument("--single", type=int, default=2000, help="Jobs enqueued one per transaction.")
    parser.add_argument("--bulk", type=int, default=10000, help="Jobs per bulk enqueue call.")
    parser.add_argument("--drain", type=int, default=10000, help="Jobs drained by one worker.")
    parser.add_argument("--djtasks-drain", type=int, default=2000,
                        help="Jobs drained by django-tasks' single-task db_worker (default 2000: ~50 jobs/s here).")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--latency-samples", type=int, default=200)
    parser.add_argument("--spacing", type=float, default=0.02, help="Seconds between latency samples.")
    parser.add_argument("--backlog-case", action="store_true",
                        help="Also drain --backlog-drain jobs behind --backlog-rows succeeded ones (every vendor).")
    parser.add_argument("--backlog-rows", type=int, default=1000000)
    parser.add_argument("--backlog-drain", type=int, default=200000)
    opts = parser.parse_args()
    opts.vendors = [v.strip() for v in opts.vendors.split(",") if v.strip()]
    unknown = set(opts.vendors) - {"postgresql", "mysql", "sqlite"}
    if unknown or opts.rounds < 1:
        parser.error(f"unknown vendor(s) {sorted(unknown)}" if unknown else "--rounds must be >= 1")
    return opts


def main():
    opts = parse_args()
    started = datetime.now(timezone.utc)
    facts = machine_facts(opts)
    servers = {"postgresql": opts.postgres_url, "mysql": opts.mysql_url, "sqlite": None}
    rounds = []
    for number in range(1, opts.rounds + 1):
        log(f"round {number} of {opts.rounds}")
        found = {}
        for vendor in opts.vendors:
            found.update(measure_headgate(opts, vendor, servers[vendor]))
        if not opts.no_peers:
            found.update(measure_peers(opts))
        rounds.append(found)
    facts["loadavg_end"] = os.getloadavg()
    summary, ratios = summarise(rounds)
    targets = check_targets(summary, ratios, rounds)
    report = render(summary, ratios, targets, opts.rounds)
    report += "\n\nLoad average: {} at the start, {} at the end".format(
        " / ".join(f"{v:.2f}" for v in facts["loadavg_start"]), " / ".join(f"{v:.2f}" for v in facts["loadavg_end"]))
    print(report)
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"{started.strftime('%Y%m%dT%H%M%SZ')}.json"
    path.write_text(json.dumps({
        "started_at": started.isoformat(), "finished_at": datetime.now(timezone.utc).isoformat(),
        "command": " ".join(["bench/run", *sys.argv[1:]]), "options": vars(opts), "machine": facts,
        "rounds": rounds, "summary": summary, "ratios": ratios, "targets": targets, "report": report,
    }, indent=2, default=str))
    print(f"\nWritten to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    started = time.monotonic()
    main()
    log(f"done in {time.monotonic() - started:.0f} s")
