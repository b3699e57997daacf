"""Reading the jobs an operator filter matches (``headgate_jobs list``, dry runs, the admin's
counts), by the same store select the verbs lock with, so a listing and a verb agree."""

from ..conf import get_settings
from ..models import Job
from ..store import get_store
from .filters import STATES, action_states


def matching_jobs(checked_filter, *, limit, using=None):
    """The first ``limit`` jobs (oldest id first) matching ``checked_filter``, as ``Job``s."""
    using = using or get_settings().database
    store = get_store(using)
    ids = [store.from_db_uuid(job_id)
           for job_id in store.select_job_ids(checked_filter, checked_filter.states or STATES, None, limit)]
    jobs = Job.objects.using(using).in_bulk(ids)
    return [jobs[job_id] for job_id in ids if job_id in jobs]  # one deleted meanwhile is left out

def count_matching(action, checked_filter, *, using=None):
    """How many jobs ``action`` would change now (read in pages of the batch size, nothing
    locked or written): what a dry run and a confirmation page show."""
    settings = get_settings()
    store = get_store(using or settings.database)
    states, size, total = action_states(action, checked_filter), settings.operations_batch_size, 0
    for part in checked_filter.id_parts(size):
        after = None
        while True:
            ids = store.select_job_ids(part, states, after, size, action=action)
            total += len(ids)
            if len(ids) < size or part.ids:
                break
            after = store.from_db_uuid(ids[-1])
    return total
