"""The worker: claim loop, executor threads, lease renewal, wake-ups and clean shutdown."""

from .context import JobContext, current_job
from .stats import WorkerStats
from .worker import Worker

__all__ = ["JobContext", "current_job", "Worker", "WorkerStats"]
