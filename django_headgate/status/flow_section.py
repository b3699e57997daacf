"""The flow-control section of ``headgate_status`` (DESIGN §15): paused queues, queue limits
and the jobs held back for a slot of their concurrency key, per queue."""

from ..flow.overview import queue_flows


def flow_section(ctx):
    """Queues with a control or held-back jobs: paused, limits, held back and depth."""
    from .sections import Section

    flows = [flow for flow in queue_flows(using=ctx.store.alias)
             if flow.paused or flow.concurrency or flow.rate_limit or flow.held_back]
    data = {
        "paused_queues": [flow.queue for flow in flows if flow.paused],
        "held_back": {flow.queue: flow.held_back for flow in flows if flow.held_back},
        "limits": {flow.queue: {"concurrency": flow.concurrency, "rate_limit": flow.rate_limit}
                   for flow in flows if flow.concurrency or flow.rate_limit},
    }
    lines = [f"{flow.queue}: {'PAUSED, ' if flow.paused else ''}{flow.available} available, "
             f"{flow.held_back} held back; limits {flow.limits_text()}" for flow in flows]
    return Section("flow", "Flow control", data, lines or ["no queue paused or limited, no job held back"])
