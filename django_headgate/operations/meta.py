"""``enqueue(..., meta={...})`` (DESIGN §16): a small JSON dict for the caller (trace context, a
request id), stored apart from the payload and shown in the admin without ``view_job_payload``.

The payload rule holds (JSON, string keys, no NUL or lone surrogate, at most MAX_JSON_DEPTH
deep), with a bound of its own: META_MAX_BYTES of encoded JSON. It is written in the enqueue's
transaction right after the insert, and only on the job just inserted (an idempotent replay
returns the key's holder with its own meta)."""

from django.db import transaction

from ..exceptions import InvalidArguments, PayloadTooLarge
from ..store import get_store
from ..values.payload import check_kwargs, dump_json
from .tracing import META_KEY, producer_span

#: The largest encoded ``meta``: context, not payload.
META_MAX_BYTES = 16_384


def check_meta(meta):
    """``meta`` (a dict with string keys, or None) as JSON text, or None; raises an
    ``InvalidArguments`` subclass (``field="meta"``) before anything is written."""
    if meta is None:
        return None
    if not isinstance(meta, dict):
        raise InvalidArguments(f"meta must be a dict with string keys (got {type(meta).__name__}).", field="meta")
    try:
        check_kwargs(meta)
    except InvalidArguments:
        raise InvalidArguments("meta must be a dict with string keys.", field="meta") from None
    text = dump_json(meta, "meta")
    if len(text) > META_MAX_BYTES:
        raise PayloadTooLarge(f"meta encodes to {len(text):,} bytes; at most {META_MAX_BYTES:,} are allowed.",
                              field="meta", size=len(text), limit=META_MAX_BYTES)
    return text


def enqueue_with_meta(insert, task, queue, meta, using):
    """Run ``insert()`` (an enqueue returning its ``Job``) and store ``meta`` (checked already,
    or None) on the job it inserted, in one transaction; with tracing on, inside a PRODUCER span
    whose context goes in ``meta["otel"]``."""
    with producer_span(task, queue) as carrier:
        if carrier:
            meta = {**(meta or {}), META_KEY: carrier}
        if meta is None:
            return insert()
        meta_json = check_meta(meta)
        with transaction.atomic(using=using):
            job = insert()
            if get_store(using).set_job_meta(job.id, meta_json):
                job.meta = meta
        return job
