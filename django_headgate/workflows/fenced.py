"""Fenced completion (DESIGN §17): ``with current_job().atomic():`` commits the task's own writes
and the job's success in one transaction on the job's database, or neither.

At the end of the block, still inside its transaction, the job's row is set ``succeeded`` only if
it still runs at the attempt's fence. If the fence moved (the lease lapsed and the job was
rescued, re-claimed or cancelled), ``LeaseLost`` is raised and logged and the whole block rolls
back. Limits: writes to another database, files, e-mails or HTTP calls made in the block are not
part of the transaction; after the block the job has succeeded, and nothing the task does later
changes its outcome (its return value is not stored: set ``block.result`` inside the block).
"""

import logging
from contextlib import contextmanager

from django.db import transaction

from ..exceptions import LeaseLost, StaleLease

logger = logging.getLogger(__name__)


class FencedBlock:
    """The handle of an ``atomic()`` block: ``result`` (any JSON value) is stored as the job's."""

    def __init__(self):
        self.result = None


@contextmanager
def fenced_completion(store, job_id, fence, dump_result):
    """The ``atomic()`` block of the attempt ``(job_id, fence)``; ``dump_result(value)`` turns
    the block's result into storable JSON text (raises as the worker's result check does)."""
    block = FencedBlock()
    try:
        with transaction.atomic(using=store.alias):
            yield block
            result_json = None if block.result is None else dump_result(block.result)
            try:
                store.complete_in_transaction(job_id, fence, result_json)
            except StaleLease:
                raise LeaseLost(f"Job {job_id}: the lease moved past fence {fence} before the block "
                                "committed; its writes were rolled back.", job_id=job_id, fence=fence) from None
    except LeaseLost:
        logger.warning("LeaseLost: the job's lease moved on; the atomic block was rolled back.",
                       extra={"action": "lease_lost", "job_id": str(job_id), "fence": fence})
        raise
