"""The queues as flow control sees them (DESIGN §15): per queue its depth (available jobs),
running and held-back jobs, and its controls. Read by ``manage.py headgate_queues``, the status
report, the dashboard and the metrics."""

from dataclasses import dataclass

from django.db.models import Count

from ..conf import get_settings
from ..models import Job, JobState, QueueControl

#: A held-back job's reason (a metrics label): it waits for a slot of its concurrency key.
REASON_CONCURRENCY_KEY = "concurrency_key"
#: An available job of a paused queue.
REASON_QUEUE_PAUSED = "queue_paused"


@dataclass
class QueueFlow:
    queue: str
    available: int = 0
    running: int = 0
    held_back: int = 0
    paused: bool = False
    concurrency: int | None = None
    rate_limit: str | None = None

    def limits_text(self):
        parts = [f"concurrency {self.concurrency}" if self.concurrency else "",
                 f"rate {self.rate_limit}" if self.rate_limit else ""]
        return ", ".join(part for part in parts if part) or "-"


def queue_flows(*, using=None):
    """Every queue with waiting or running jobs or a control row, sorted by name."""
    using = using or get_settings().database
    flows = {}
    counts = (Job.objects.using(using)
              .filter(state__in=[JobState.AVAILABLE, JobState.RUNNING, JobState.HELD_BACK])
              .values_list("queue", "state").annotate(n=Count("id")).order_by())
    for queue, state, n in counts:
        setattr(flows.setdefault(queue, QueueFlow(queue)), state, n)
    for control in QueueControl.objects.using(using):
        flow = flows.setdefault(control.queue, QueueFlow(control.queue))
        flow.paused, flow.concurrency, flow.rate_limit = control.paused, control.concurrency, control.rate_limit
    return [flows[queue] for queue in sorted(flows)]
