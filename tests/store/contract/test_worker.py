"""The store contract's worker section (store/contract/worker.py): acknowledge-and-claim,
lock-free renewal, fence reads, release without spending the attempt, and the snooze: a fenced
write that makes a running job available again at store now + seconds without spending its
attempt, counting the snooze, which claims report (the session time budget:
tests/store/test_statement_budget.py)."""

import json
import threading
from datetime import timedelta

import pytest
from django.db import connections, transaction
from django.test.utils import CaptureQueriesContext

from django_headgate import api
from django_headgate.exceptions import StaleLease
from django_headgate.models import Job
from django_headgate.store.base import Completion
from tests.factories import JobFactory


def test_acknowledge_and_claim_does_both_fenced(store):
    first, second = JobFactory(priority=5), JobFactory(priority=5)
    waiting = [JobFactory() for _ in range(3)]
    accepted, claimed = store.acknowledge_and_claim([], "w", None, 2, 30)
    assert accepted == set() and {c.id for c in claimed} == {first.id, second.id}
    a, b = claimed
    accepted, claimed = store.acknowledge_and_claim(
        [Completion(a.id, a.fence, '{"n": 1}'), Completion(b.id, b.fence + 1, None)], "w", None, 10, 30)
    assert accepted == {a.id}  # b's fence is not the claimed one
    assert {c.id for c in claimed} == {w.id for w in waiting}
    assert Job.objects.get(pk=a.id).result == {"n": 1}
    assert Job.objects.get(pk=b.id).state == "running"


def acknowledge(store, *completions):
    """The accepted ids of an acknowledgement that claims nothing."""
    accepted, claimed = store.acknowledge_and_claim(list(completions), "w", None, 0, 30)
    assert claimed == []
    return accepted


def test_acknowledgement_is_fenced_and_sets_the_result_and_expiry(store):
    job = JobFactory()
    (claimed,) = store.claim_jobs("w", None, 1, 30)
    assert acknowledge(store, Completion(claimed.id, claimed.fence + 1, '"forged"')) == set()
    assert Job.objects.get(pk=job.id).state == "running"
    assert acknowledge(store, Completion(claimed.id, claimed.fence, '{"ok": 1}')) == {claimed.id}
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.result, row.lease_owner) == ("succeeded", {"ok": 1}, None)
    assert row.finished_at is not None
    assert timedelta(days=29, hours=23) < row.expires_at - row.finished_at <= timedelta(days=30, seconds=1)
    # A second acknowledgement of the same attempt changes nothing.
    assert acknowledge(store, Completion(claimed.id, claimed.fence, '"again"')) == set()
    assert Job.objects.get(pk=job.id).result == {"ok": 1}


def test_forever_class_never_expires(store):
    job = JobFactory(retention_class="forever")
    (claimed,) = store.claim_jobs("w", None, 1, 30)
    assert acknowledge(store, Completion(claimed.id, claimed.fence, None)) == {claimed.id}
    row = Job.objects.get(pk=job.id)
    assert row.state == "succeeded" and row.expires_at is None and row.result is None


def test_results_of_the_largest_allowed_size_are_acknowledged_together(store):
    """Four results of MAX_RESULT_BYTES's upper bound (4 MiB of JSON), all quotes, which driver
    escaping doubles: one statement would exceed MariaDB's max_allowed_packet (16 MiB), so the
    store splits it; one transaction still acknowledges them all, and claims."""
    from django_headgate.conf import MAX_RESULT_BYTES_RANGE

    jobs = [JobFactory() for _ in range(5)]
    _, claimed = store.acknowledge_and_claim([], "w", None, 4, 30)
    results = {c.id: json.dumps(f"{n}" + '"' * (MAX_RESULT_BYTES_RANGE[1] // 2 - 4)) for n, c in enumerate(claimed)}
    assert all(len(text) <= MAX_RESULT_BYTES_RANGE[1] for text in results.values())
    accepted, more = store.acknowledge_and_claim(
        [Completion(c.id, c.fence, results[c.id]) for c in claimed], "w", None, 1, 30)
    assert accepted == set(results) and [c.id for c in more] == [jobs[4].id]
    for job_id, text in results.items():
        row = Job.objects.get(pk=job_id)
        assert row.state == "succeeded" and row.result == json.loads(text)


def test_acknowledge_and_claim_with_named_queues_and_no_claim(store):
    JobFactory(queue="other")
    mine = JobFactory(queue="mine")
    accepted, claimed = store.acknowledge_and_claim([], "w", ["mine"], 5, 30)
    assert [c.id for c in claimed] == [mine.id]
    accepted, claimed = store.acknowledge_and_claim([Completion(mine.id, claimed[0].fence, None)], "w", ["mine"], 0, 30)
    assert accepted == {mine.id} and claimed == []
    assert Job.objects.get(pk=mine.id).state == "succeeded"


def test_read_fences_and_release(store):
    job = JobFactory(max_attempts=1)
    (claimed,) = store.claim_jobs("w", None, 1, 30)
    assert store.read_fences([claimed.id]) == {claimed.id: ("running", claimed.fence)}
    assert store.release_jobs("someone-else", [(claimed.id, claimed.fence)]) == set()
    assert store.release_jobs("w", [(claimed.id, claimed.fence)]) == {claimed.id}
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, row.lease_owner, row.fence) == ("available", 0, None, 1)
    assert store.release_jobs("w", [(claimed.id, claimed.fence)]) == set()  # fenced: once
    (again,) = store.claim_jobs("w", None, 1, 30)
    assert (again.attempt, again.fence) == (1, 2)


def test_renewal_is_fenced_and_owned(store):
    JobFactory(), JobFactory()
    mine, theirs = store.claim_jobs("me", None, 1, 30)[0], store.claim_jobs("them", None, 1, 30)[0]
    before = Job.objects.get(pk=mine.id).lease_expires_at
    assert store.renew_unlocked_leases("me", [(mine.id, mine.fence + 1)], 120) == {}
    renewed = store.renew_unlocked_leases("me", [(mine.id, mine.fence), (theirs.id, theirs.fence)], 120)
    assert renewed == {mine.id: False}
    assert Job.objects.get(pk=mine.id).lease_expires_at > before + timedelta(seconds=60)


@pytest.mark.django_db(transaction=True)
def test_locked_rows_are_skipped_not_waited_for(store):
    if store.vendor == "sqlite":
        pytest.skip("SQLite has no row locks")
    JobFactory(), JobFactory()
    locked, free = store.claim_jobs("w", None, 2, 30)
    holding, release = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                list(Job.objects.select_for_update().filter(pk=locked.id))
                holding.set()
                release.wait(20)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        leases = [(locked.id, locked.fence), (free.id, free.fence)]
        assert store.renew_unlocked_leases("w", leases, 60) == {free.id: False}
        accepted, _ = store.acknowledge_and_claim(
            [Completion(locked.id, locked.fence, None), Completion(free.id, free.fence, None)], "w", None, 0, 30)
        assert accepted == {free.id}
        assert store.read_fences([locked.id]) == {locked.id: ("running", locked.fence)}
    finally:
        release.set()
        holder.join(10)


# -- snooze ----------------------------------------------------------------------------------

def claim_one(store, worker="w"):
    (claimed,) = store.claim_jobs(worker, None, 1, 30)
    return claimed


def test_snooze_releases_without_spending_the_attempt(store):
    job = JobFactory(max_attempts=1)
    claimed = claim_one(store)
    store.set_progress(claimed.id, claimed.fence, '{"step": 1}')
    before = store.now()
    store.snooze_job(claimed.id, claimed.fence, 90.0)
    after = store.now()
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, row.snoozes, row.fence) == ("available", 0, 1, claimed.fence)
    assert (row.lease_owner, row.lease_expires_at, row.started_at) == (None, None, None)
    assert before + timedelta(seconds=90) <= row.run_at <= after + timedelta(seconds=90)
    assert row.errors == [] and row.finished_at is None and row.expires_at is None
    assert row.progress == {"step": 1}  # kept for the next run


@pytest.mark.parametrize("seconds", [0.0, 0.25, 7 * 24 * 3600.0])
def test_snooze_delay_is_from_the_store_clock(store, seconds):
    JobFactory()
    claimed = claim_one(store)
    before = store.now()
    store.snooze_job(claimed.id, claimed.fence, seconds)
    after = store.now()
    run_at = Job.objects.get(pk=claimed.id).run_at
    slack = timedelta(milliseconds=1)  # SQLite's clock text has millisecond precision
    assert before + timedelta(seconds=seconds) - slack <= run_at <= after + timedelta(seconds=seconds) + slack


def test_snoozes_are_counted_and_claims_report_them(store):
    job = JobFactory(max_attempts=1)
    first = claim_one(store)
    assert first.snoozes is None  # never snoozed: the column is NULL
    store.snooze_job(first.id, first.fence, 0)
    second = claim_one(store)
    assert (second.attempt, second.fence, second.snoozes) == (1, first.fence + 1, 1)
    store.snooze_job(second.id, second.fence, 0)
    accepted, (third,) = store.acknowledge_and_claim([], "w", None, 1, 30)
    assert (third.attempt, third.snoozes) == (1, 2)
    assert store.acknowledge_and_claim([Completion(third.id, third.fence, '"done"')], "w", None, 1, 30)[0] == {job.id}
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, row.snoozes) == ("succeeded", 1, 2)


def test_snooze_is_fenced(store):
    job = JobFactory(max_attempts=5)
    first = claim_one(store, worker="old")
    Job.objects.filter(pk=job.id).update(lease_expires_at=store.now() - timedelta(seconds=1))
    assert store.rescue_expired(10) == 1
    second = claim_one(store, worker="new")
    with pytest.raises(StaleLease):
        store.snooze_job(first.id, first.fence, 60)
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, row.snoozes, row.lease_owner) == ("running", 2, None, "new")
    store.snooze_job(second.id, second.fence, 60)
    with pytest.raises(StaleLease):  # once: the row no longer runs
        store.snooze_job(second.id, second.fence, 60)
    assert Job.objects.get(pk=job.id).snoozes == 1


def test_a_cancelled_job_cannot_snooze(store):
    job = JobFactory()
    claimed = claim_one(store)
    api.cancel(job.id)  # running: an abort request, which the worker ends as cancelled
    store.cancel_aborted_job(claimed.id, claimed.fence)
    with pytest.raises(StaleLease):
        store.snooze_job(claimed.id, claimed.fence, 1)
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.snoozes) == ("cancelled", None)


# -- statements per batch (the capability table of docs/architecture.md) ------------------------

def statements_to_claim_and_acknowledge(store, jobs):
    """``(statements of the claim, statements of the acknowledgement)`` of ``jobs`` new jobs."""
    for _ in range(jobs):
        JobFactory()
    with CaptureQueriesContext(connections[store.alias]) as claim:
        _, claimed = store.acknowledge_and_claim([], "w", None, jobs, 30)
    assert len(claimed) == jobs
    with CaptureQueriesContext(connections[store.alias]) as acknowledgement:
        accepted, _ = store.acknowledge_and_claim([Completion(c.id, c.fence, "1") for c in claimed], "w", None, 0, 30)
    assert len(accepted) == jobs
    return len(claim.captured_queries), len(acknowledgement.captured_queries)


def test_claims_and_acknowledgements_take_as_many_statements_for_20_jobs_as_for_2(store):
    two = statements_to_claim_and_acknowledge(store, 2)
    assert min(two) > 0 and two == statements_to_claim_and_acknowledge(store, 20)


@pytest.mark.django_db(transaction=True)
def test_a_transaction_left_idle_past_the_bound_gives_its_row_locks_back(store, vendor):
    """A worker frozen inside one of its transactions (SIGSTOP between a lock and its update)
    must not keep the rows it locked: the server ends the session once the transaction has idled
    past ``bound_idle_transactions`` (the worker sets it to its lease)."""
    if vendor == "sqlite":
        pytest.skip("SQLite has no idle-transaction bound: one writer, and its busy timeout bounds the wait")
    if vendor == "mysql" and not connections["default"].mysql_is_mariadb:
        pytest.skip("MySQL 8 has no idle_transaction_timeout")
    job = JobFactory()
    locked, ended = threading.Event(), threading.Event()
    errors = []

    def frozen_worker():
        from django_headgate.store import get_store
        own = get_store()
        try:
            own.bound_idle_transactions(1)
            with own.atomic():
                list(Job.objects.select_for_update().filter(pk=job.id))
                locked.set()
                ended.wait(10)  # idle in the transaction, as a stopped process is
                list(Job.objects.filter(pk=job.id))  # the server ended the session meanwhile
        except Exception as exc:  # the expected end: the connection is gone
            errors.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=frozen_worker, daemon=True)
    thread.start()
    assert locked.wait(10)
    # Another session takes the row once the bound ended the idle transaction (not before).
    with transaction.atomic():
        assert not Job.objects.select_for_update(skip_locked=True).filter(pk=job.id).exists()
    taken = None
    for _ in range(60):
        with transaction.atomic():
            if Job.objects.select_for_update(skip_locked=True).filter(pk=job.id).exists():
                taken = True
                break
        threading.Event().wait(0.1)
    ended.set()
    thread.join(10)
    assert taken, "the idle transaction kept its row lock past the bound"
    assert errors, "the idle transaction's session was not ended"
