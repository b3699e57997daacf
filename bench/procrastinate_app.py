"""The Procrastinate app and its no-op task (peer; imported only by procrastinate_bench in
bench/.venv-peers). The database comes from PROCRASTINATE_BENCH_DSN so that the worker
subprocesses build the same app."""

import os

import procrastinate

app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=os.environ["PROCRASTINATE_BENCH_DSN"]))


@app.task(name="noop")
def noop():
    return None
