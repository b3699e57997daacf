"""Helpers shared by every bench module: timing, statistics, process control, result output.

Standard library only: this module is imported both from the project's virtualenv (Headgate)
and from bench/.venv-peers (Procrastinate, django-tasks, the raw-SQL floor).
"""

import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Bounds that keep every wait finite: the bench always stops by itself.
READY_TIMEOUT_S = 60.0
DRAIN_TIMEOUT_S = 600.0
LATENCY_SETTLE_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


def log(message):
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def chunks(rows, size):
    """The ranges ``(first, last)`` that cover 1..rows in steps of ``size``: one bulk INSERT each."""
    for first in range(1, rows + 1, size):
        yield first, min(rows, first + size - 1)


def percentile(values, fraction):
    """Nearest-rank percentile of a non-empty list (fraction 0.5 = median)."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[index]


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def rate(count, seconds):
    return count / seconds if seconds > 0 else None


def measure_raw_drain(execute, fill, drain, count, batch, analyze_sql, empty_sql="TRUNCATE raw_job"):
    """A raw-SQL floor's drain, with and without acknowledgements, on a table ``raw_job`` emptied
    (``empty_sql``) and refilled (``fill(count)``) before each and analyzed (``analyze_sql``);
    ``drain(batch, acknowledge)`` returns (jobs done, seconds). The vendors differ in their
    statements only."""
    result = {"jobs": count, "claim_per_statement": batch}
    for acknowledge, key in ((True, "jobs_per_s"), (False, "claim_only_jobs_per_s")):
        execute(empty_sql)
        fill(count)
        execute(analyze_sql)
        done, seconds = drain(batch, acknowledge)
        assert done == count, (done, count)
        result[key] = rate(done, seconds)
        if acknowledge:
            result["seconds"] = seconds
    execute(empty_sql)
    return result


def timed(func, *args, **kwargs):
    """Run func; return (its result, elapsed seconds by perf_counter)."""
    started = time.perf_counter()
    result = func(*args, **kwargs)
    return result, time.perf_counter() - started


def latency_summary(latencies_s):
    """Median/p95/max in milliseconds of a list of latencies in seconds."""
    ms = [value * 1000.0 for value in latencies_s]
    return {
        "samples": len(ms),
        "median_ms": median(ms),
        "p95_ms": percentile(ms, 0.95),
        "max_ms": max(ms),
    }


def wait_until(predicate, timeout, interval=0.05, what="condition"):
    """Poll predicate() until it is truthy; raise TimeoutError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def bench_env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update({key: str(value) for key, value in extra.items()})
    return env


def _machine_busy_seconds():
    """Busy CPU seconds of the whole machine since boot, every core added up (the database
    server's too), from /proc/stat; None where there is none."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
    except OSError:
        return None
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # less idle, iowait


class BusySampler:
    """Samples the machine's busy CPU every ``interval`` seconds on a thread while in its ``with``
    block; ``cores_between(start, end)`` (``time.time()`` values, e.g. the store clock's first start
    and last finish of a drain on this machine) is the mean number of busy cores in that span."""

    def __init__(self, interval=0.05):
        self.interval = interval
        self.samples = []  # (time.time(), busy seconds)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while True:
            busy = _machine_busy_seconds()
            if busy is None:
                return
            self.samples.append((time.time(), busy))
            if self._stop.wait(self.interval):
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def cores_between(self, start, end):
        inside = [sample for sample in self.samples if start <= sample[0] <= end]
        if len(inside) < 2:
            return None
        (t0, busy0), (t1, busy1) = inside[0], inside[-1]
        return (busy1 - busy0) / (t1 - t0)


def children_cpu_seconds():
    """User + system CPU seconds of every child process this process has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_to_end(cmd, env, timeout=DRAIN_TIMEOUT_S):
    """Run a worker until it exits by itself; return wall seconds. Killed after ``timeout``."""
    started = time.perf_counter()
    process = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    wall = time.perf_counter() - started
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {code}")
    return wall


def start_background(cmd, env):
    return subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)


def stop_background(process, sig=signal.SIGTERM):
    """Stop a worker we started: ``sig``, then SIGKILL after STOP_TIMEOUT_S."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def paced(count, spacing_s):
    """Yield 0..count-1, sleeping so that iterations start ``spacing_s`` apart."""
    start = time.perf_counter()
    for index in range(count):
        delay = start + index * spacing_s - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        yield index


def emit(result, out_path):
    """Write one system's measurements as JSON (the orchestrator reads the file)."""
    Path(out_path).write_text(json.dumps(result, indent=2, default=str))
