"""Run a Worker on a thread of its own (its own connections), as a worker process would."""

import threading

from django.db import connections

from django_headgate.worker import Worker


class WorkerThread:
    def __init__(self, **options):
        self.worker = Worker(**options)
        self.stats = None
        self.error = None
        self.thread = threading.Thread(target=self._run, name="test-worker", daemon=True)
        self.thread.start()

    def _run(self):
        try:
            self.stats = self.worker.run()
        except BaseException as exc:  # reported by join()
            self.error = exc
        finally:
            connections.close_all()

    def join(self, timeout=60):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the worker did not stop"
        if self.error is not None:
            raise self.error
        return self.stats

