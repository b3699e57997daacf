"""CPU per job of the encryption steps alone, plain against encrypted, in one process.

    python -m bench.encryption_cost [--jobs 5000] [--repeats 7] [--threads 4]

No database traffic (Django is set up on a scratch SQLite file, migrated, read once for the queue
policy). The same ~270 bytes
of arguments as ``bench.encryption_bench``. Each figure is the best of ``--repeats`` runs of
``--jobs`` calls (CPU time of the process, so the least disturbed by other load on the machine):

- ``build``: ``build_new_job`` of a spec, the Python side of ``enqueue_many`` per job (the
  encryption step is one call in it);
- ``worker``: what a worker does per job around the task, a claimed row's arguments opened and
  its result sealed (``opened_arguments`` + ``seal_outcome``), for a row as psycopg returns jsonb
  (decoded) and as MariaDB returns JSON (text); also run in ``--threads`` threads at once, the
  worker's job threads, where a call that releases the GIL makes them queue for it.
"""

import argparse
import json
import os
import tempfile
import threading
import time

from bench.common import log
from bench.encryption_bench import ENCRYPTION, PAYLOAD
from bench.headgate_bench import setup_django


def setup():
    os.environ["HG_BENCH_ENCRYPTION"] = json.dumps(ENCRYPTION)
    setup_django("sqlite:///" + os.path.join(tempfile.gettempdir(), "hg_encryption_cost.db"))


def best_cpu_us(call, jobs, repeats, threads=1):
    """Best CPU µs per call over ``repeats`` runs of ``jobs`` calls (split over ``threads``)."""
    best = float("inf")
    for _ in range(repeats):
        share = jobs // threads
        workers = [threading.Thread(target=lambda: [call() for _ in range(share)]) for _ in range(threads)]
        cpu = time.process_time()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        best = min(best, (time.process_time() - cpu) * 1e6 / (share * threads))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    setup()
    from django_headgate import JobSpec
    from django_headgate.compliance.decryption import opened_arguments
    from django_headgate.compliance.encryption import seal_outcome, stored_payload
    from django_headgate.conf import get_settings
    from django_headgate.jobs.new_jobs import OptionsCache, build_new_job
    from django_headgate.values.job_options import fingerprint
    from django_headgate.worker.context import json_result
    from django_headgate.worker.executor import Outcome

    conf = get_settings()
    result_json = json_result(PAYLOAD)
    rows = {}
    for queue in ("plain", "sealed"):
        new_job = build_new_job(JobSpec("bench.tasks.echo", args=(PAYLOAD,), queue=queue), conf, "default")
        rows[queue] = {"text": (new_job.args_json, new_job.kwargs_json),
                       "decoded": (json.loads(new_job.args_json), json.loads(new_job.kwargs_json))}
    assert stored_payload("bench.tasks.echo", "sealed", "[]", "{}", fingerprint)[0] != "[]"

    def build(queue):
        spec, options = JobSpec("bench.tasks.echo", args=(PAYLOAD,), queue=queue), OptionsCache(conf, "default")
        return lambda: build_new_job(spec, conf, "default", options=options)

    def worker(queue, shape):
        args_json, kwargs_json = rows[queue][shape]
        if queue == "plain":
            return lambda: (opened_arguments(args_json, kwargs_json, False), Outcome(None, result_json=result_json))
        return lambda: (opened_arguments(args_json, kwargs_json, True),
                        seal_outcome(Outcome(None, result_json=result_json)))

    steps = [("build", lambda queue: build(queue), 1),
             ("worker, jsonb row", lambda queue: worker(queue, "decoded"), 1),
             ("worker, text row", lambda queue: worker(queue, "text"), 1),
             (f"worker, jsonb row, {args.threads} threads", lambda queue: worker(queue, "decoded"), args.threads)]
    for name, make, threads in steps:
        plain = best_cpu_us(make("plain"), args.jobs, args.repeats, threads)
        sealed = best_cpu_us(make("sealed"), args.jobs, args.repeats, threads)
        log(f"{name}: plain {plain:.1f} us, encrypted {sealed:.1f} us CPU per job (+{sealed - plain:.1f} us)")


if __name__ == "__main__":
    main()
