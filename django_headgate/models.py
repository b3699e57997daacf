"""Headgate's tables as Django models. Table names are part of the contract (DESIGN §4).

``headgate_job``, ``headgate_job_archive`` and ``headgate_job_dependency`` are written by ``store/``
only (enqueue, claims, fenced writes, rescue, sweep, the unique key's release, the release of
dependents: tests/store/test_the_store_is_the_only_door.py);
their models are for reading and the admin. The small tables are written through these models:
retention classes and policies by ``policies.py``, the duty runs and periodic cursors by their
QuerySet methods below. No raw SQL here.

Past 300 lines on purpose: every table of the app is declared in this one module, where Django's
app registry and the migrations find it (the flow-control tables of DESIGN §15, the workflow
tables of §17 and the compliance tables of §18 are at the end).
"""

from django.db import models


class JobState(models.TextChoices):
    AVAILABLE = "available"
    RUNNING = "running"
    #: Waits for a slot of its concurrency key (DESIGN §15): no lease, attempts unchanged.
    HELD_BACK = "held_back"
    SUCCEEDED = "succeeded"
    DEAD = "dead"
    CANCELLED = "cancelled"
    WAITING = "waiting"  # depends_on: never claimed until its parents ended


TERMINAL_STATES = (JobState.SUCCEEDED, JobState.DEAD, JobState.CANCELLED)


class JobQuerySet(models.QuerySet):
    """The status reader's filters (``django_headgate.status.reader``)."""

    def in_queue(self, queue):
        return self.filter(queue=queue)

    def in_state(self, state):
        return self.filter(state=state)

    def ready(self, store_now):
        """Available and due by ``store_now`` (the store clock): what a claim may take."""
        return self.filter(state=JobState.AVAILABLE, run_at__lte=store_now)


class Job(models.Model):
    """A job in the hot table ``headgate_job``."""

    objects = JobQuerySet.as_manager()

    id = models.UUIDField(primary_key=True)
    queue = models.CharField(max_length=64)
    task = models.CharField(max_length=255)
    args = models.JSONField(default=list)
    kwargs = models.JSONField(default=dict)
    priority = models.SmallIntegerField(default=0)
    state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.AVAILABLE)
    run_at = models.DateTimeField()
    attempts = models.IntegerField(default=0)
    max_attempts = models.IntegerField()
    lease_owner = models.CharField(max_length=200, null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    fence = models.BigIntegerField(default=0)
    unique_key = models.CharField(max_length=255, null=True, blank=True, unique=True)
    #: How long ``unique_key`` is held: NULL = until the row is evicted (the default, "evicted"),
    #: "finished" = while the job is not terminal (``jobs/unique_modes.py`` releases it lazily).
    unique_until = models.CharField(max_length=16, null=True, blank=True)
    # Job control (DESIGN §12): the attempt's time limit in seconds (NULL = none), when an abort
    # of the running attempt was requested (store clock), and how many times the job snoozed.
    timeout = models.FloatField(null=True, blank=True)
    abort_requested_at = models.DateTimeField(null=True, blank=True)
    snoozes = models.IntegerField(null=True, blank=True)
    # Someone waits for this job to end (headgate.wait()): on PostgreSQL a trigger sends a NOTIFY
    # when such a job turns terminal; NULL (nobody waits) costs the acknowledgement nothing.
    awaited = models.BooleanField(null=True, blank=True)
    # enqueue(meta=): the caller's small JSON dict (trace context, request id), not payload.
    meta = models.JSONField(null=True, blank=True)
    fingerprint = models.CharField(max_length=64)
    progress = models.JSONField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    output = models.TextField(null=True, blank=True)
    errors = models.JSONField(default=list)
    tags = models.JSONField(default=list)
    retention_class = models.CharField(max_length=100)
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    has_dependents = models.BooleanField(null=True, blank=True)  # workflows: docs/workflows.md
    depends_on = models.JSONField(null=True, blank=True)
    waiting_for = models.IntegerField(null=True, blank=True)
    on_parent_failure = models.CharField(max_length=8, null=True, blank=True)
    # A member of headgate_batch; indexed by migration 0012 (headgate_job_batch_idx, partial where
    # the vendor can), not here: MariaDB would warn on every command that the condition is ignored.
    batch_id = models.UUIDField(null=True, blank=True)
    # Flow control (DESIGN §15): at most concurrency_limit leased jobs per key (NULL: no limit).
    concurrency_key = models.CharField(max_length=255, null=True, blank=True)
    concurrency_limit = models.IntegerField(null=True, blank=True)

    class Meta:
        db_table = "headgate_job"
        ordering = ["-created_at"]
        indexes = [
            # Claim on named queues: state = 'available' AND queue IN (...) ORDER BY priority DESC, run_at.
            models.Index(fields=["state", "queue", "-priority", "run_at"], name="headgate_job_claim_idx"),
            # Claim on every queue, and rescue (state = 'running' AND lease_expires_at < now).
            models.Index(fields=["state", "-priority", "run_at"], name="headgate_job_claim_any_idx"),
            # Retention sweep: expires_at <= now (NULL for non-terminal and 'forever' rows).
            models.Index(fields=["expires_at"], name="headgate_job_expires_idx"),
            # Flow control: running rows of a key (the count), held-back rows of a key in claim order.
            models.Index(fields=["concurrency_key", "state", "-priority", "run_at"], name="headgate_job_flow_key_idx"),
            # headgate_job_held_back_idx, a partial index of held-back rows, is made by migration
            # 0015 on PostgreSQL and SQLite only (declared here, it would warn on MariaDB).
        ]
        permissions = [("view_job_payload", "Can view job arguments and results")]

    def __str__(self):
        return f"{self.task} [{self.state}] {self.id}"


class JobDependency(models.Model):
    """An edge ``parent -> child`` of a waiting job, written by the store (docs/workflows.md)."""

    parent_id, child_id = models.UUIDField(), models.UUIDField(db_index=True)

    class Meta:
        db_table = "headgate_job_dependency"
        constraints = [
            models.UniqueConstraint(fields=["parent_id", "child_id"], name="headgate_dependency_edge_uniq"),
        ]


class Batch(models.Model):
    """A batch of jobs (``headgate.batch()``, docs/workflows.md), written by the store: how many
    members it has, how many ended in each terminal state (counted in the transactions that end
    them) and its callback jobs, released once when the last member ends."""

    id = models.UUIDField(primary_key=True)
    total = models.IntegerField(null=True, blank=True)  # NULL until the batch block closes
    succeeded = models.IntegerField(default=0)
    dead = models.IntegerField(default=0)
    cancelled = models.IntegerField(default=0)
    on_success_id = models.UUIDField(null=True, blank=True)
    on_finish_id = models.UUIDField(null=True, blank=True)
    on_dead_id = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "headgate_batch"
        ordering = ["-created_at"]
        verbose_name_plural = "batches"

    @property
    def ended(self):
        return self.succeeded + self.dead + self.cancelled

    @property
    def counts(self):
        """Members by end state, and those not ended yet (``pending``)."""
        pending = (self.total or 0) - self.ended
        return {"succeeded": self.succeeded, "dead": self.dead, "cancelled": self.cancelled, "pending": pending}

    def __str__(self):
        return f"batch {self.id} ({self.ended}/{self.total})"
class FlowKey(models.Model):
    """A concurrency key's or a task rate's lock row (claims and releases take turns on it), with
    the rate window of a ``rate:<task>`` row (flow/)."""

    key = models.CharField(max_length=255, primary_key=True)
    window_started_at = models.DateTimeField(null=True, blank=True)
    window_count = models.IntegerField(default=0)

    class Meta:
        db_table = "headgate_flow_key"


class QueueControl(models.Model):
    """Run-time controls of one queue (DESIGN §15), read by workers through a short cache:
    ``paused`` (nothing is claimed from it), ``concurrency`` (leased jobs across all workers) and
    ``rate_limit`` ("R/s|m|h" starts per window; the window's start and count are kept here).
    Not the storage policy's ``paused``, which holds the cleanup sweep."""

    queue = models.CharField(max_length=64, primary_key=True)
    paused = models.BooleanField(default=False)
    concurrency = models.IntegerField(null=True, blank=True)
    rate_limit = models.CharField(max_length=32, null=True, blank=True)
    window_started_at = models.DateTimeField(null=True, blank=True)
    window_count = models.IntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "headgate_queue_control"
        ordering = ["queue"]

    def __str__(self):
        return self.queue


class RetentionClass(models.Model):
    """A named retention duration; immutable once registered. NULL duration keeps rows forever."""

    key = models.CharField(max_length=100, primary_key=True)
    duration = models.DurationField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "headgate_retention_class"
        ordering = ["key"]
        verbose_name_plural = "retention classes"

    def __str__(self):
        return self.key


class QueueStoragePolicy(models.Model):
    """How long a queue's terminal jobs stay in the hot table (NULL retention = forever)."""

    queue = models.CharField(max_length=64, primary_key=True)
    retention = models.DurationField(null=True, blank=True)
    retention_class = models.CharField(max_length=100)
    cleanup_batch_limit = models.IntegerField(null=True, blank=True)
    paused = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "headgate_queue_policy"
        ordering = ["queue"]
        verbose_name_plural = "queue storage policies"

    def __str__(self):
        return self.queue


class ArchivePolicy(models.Model):
    """Opt-in cold archive for one queue: evicted jobs are copied and kept this long."""

    queue = models.CharField(max_length=64, primary_key=True)
    archive_retention = models.DurationField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "headgate_archive_policy"
        ordering = ["queue"]
        verbose_name_plural = "archive policies"

    def __str__(self):
        return self.queue


class WorkerHeartbeatQuerySet(models.QuerySet):
    def renewed_since(self, cutoff):
        """Live workers: renewed at or after ``cutoff`` (store-clock now - STALE_AFTER)."""
        return self.filter(last_heartbeat_at__gte=cutoff)

    def not_renewed_since(self, cutoff):
        return self.filter(last_heartbeat_at__lt=cutoff)


class WorkerHeartbeat(models.Model):
    """One row per worker ID, renewed by the live worker process that owns it."""

    objects = WorkerHeartbeatQuerySet.as_manager()

    worker_id = models.CharField(max_length=200, primary_key=True)
    instance_id = models.UUIDField()
    hostname = models.CharField(max_length=255)
    pid = models.IntegerField()
    queues = models.JSONField(default=list)
    started_at = models.DateTimeField()
    last_heartbeat_at = models.DateTimeField()

    class Meta:
        db_table = "headgate_worker_heartbeat"
        ordering = ["worker_id"]
        indexes = [
            # Heartbeat prune: oldest first, last_heartbeat_at < now - retention.
            models.Index(fields=["last_heartbeat_at"], name="headgate_heartbeat_last_idx"),
        ]

    def __str__(self):
        return self.worker_id


class ArchivedJobColumns(models.Model):
    """The columns of an archived job, shared by the archive and the rows a legal hold keeps past
    their month's prune (:class:`HeldArchivedJob`): one list, so the two tables cannot drift."""

    archive_id = models.UUIDField(primary_key=True)
    job_id = models.UUIDField()
    queue = models.CharField(max_length=64)
    task = models.CharField(max_length=255)
    args = models.JSONField(default=list)
    kwargs = models.JSONField(default=dict)
    errors = models.JSONField(default=list)
    attempts = models.IntegerField()
    fingerprint = models.CharField(max_length=64)
    terminal_state = models.CharField(max_length=16, choices=[(s.value, s.label) for s in TERMINAL_STATES])
    result = models.JSONField(null=True, blank=True)
    tags = models.JSONField(default=list)
    created_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    #: Store-clock milliseconds of the eviction; picks the month partition.
    evicted_at_ms = models.BigIntegerField()
    #: The queue's archive retention in force at eviction (later policy changes never shorten it).
    archive_retention_ms = models.BigIntegerField()
    #: evicted_at_ms + archive_retention_ms: the earliest moment the row may be pruned.
    expires_at_ms = models.GeneratedField(
        expression=models.F("evicted_at_ms") + models.F("archive_retention_ms"),
        output_field=models.BigIntegerField(),
        db_persist=True,
    )

    class Meta:
        abstract = True


class ArchivedJob(ArchivedJobColumns):
    """An audit copy of an evicted terminal job in the cold archive ``headgate_job_archive``.

    Written only by the retention sweep (queues with an :class:`ArchivePolicy`) and removed only
    by pruning a whole closed month. The table is partitioned by the store-time month of
    ``evicted_at_ms`` and its database primary key is ``(archive_id, evicted_at_ms)``; Django
    treats ``archive_id`` (unique on its own: a random UUID) as the primary key. The schema is
    hand-written in migration ``0002_job_archive``: never let Django alter this table.
    ``args``, ``kwargs`` and ``result`` are payloads: sensitive data.
    """


    class Meta:
        db_table = "headgate_job_archive"
        verbose_name = "archived job"
        ordering = ["-evicted_at_ms"]
        indexes = [
            # Audit view: one queue, newest first.
            models.Index(fields=["queue", "evicted_at_ms"], name="headgate_archive_queue_idx"),
            # Audit view: every queue, newest first (a merge of per-partition index scans).
            models.Index(fields=["evicted_at_ms"], name="headgate_archive_evicted_idx"),
            # Audit lookup of an archived job by its job id.
            models.Index(fields=["job_id"], name="headgate_archive_job_idx"),
            # Prune check: does any row of a month have expires_at_ms > store now?
            models.Index(fields=["expires_at_ms"], name="headgate_archive_expires_idx"),
        ]
        permissions = [("view_archive_payload", "Can reveal archived job payloads"),
                       ("replay_archived_job", "Can replay an archived job as a new job")]

    def __str__(self):
        return f"{self.task} [{self.terminal_state}] {self.job_id} (archived)"


class DutyRunQuerySet(models.QuerySet):
    def record(self, *, duty, status, rows, batches, seconds, started_at, finished_at, next_run_at):
        """Store the last pass of ``duty`` (one row per duty, replaced on every pass)."""
        return self.update_or_create(duty=duty, defaults={
            "status": status, "rows": rows, "batches": batches, "seconds": seconds,
            "started_at": started_at, "finished_at": finished_at, "next_run_at": next_run_at,
        })


class DutyRun(models.Model):
    """The last pass of a maintenance duty and when its next pass is due (store-clock times).

    Written by the maintainer that held the duty's singleton lock, read by every maintainer
    (the cadence survives restarts and is shared) and by ``headgate_status``.
    """

    duty = models.CharField(max_length=64, primary_key=True)
    status = models.CharField(max_length=32)
    rows = models.IntegerField(default=0)
    batches = models.IntegerField(default=0)
    seconds = models.FloatField(default=0.0)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    next_run_at = models.DateTimeField(null=True, blank=True)

    objects = DutyRunQuerySet.as_manager()

    class Meta:
        db_table = "headgate_duty_run"
        ordering = ["duty"]

    def __str__(self):
        return f"{self.duty}: {self.status}"


class PeriodicTickQuerySet(models.QuerySet):
    def ensure(self, name, seen_at):
        """Create the row of schedule ``name`` (first seen at ``seen_at``) unless it exists."""
        self.bulk_create([PeriodicTick(name=name, first_seen_at=seen_at)], ignore_conflicts=True)

    def advance(self, name, last_tick_at, tick_at, job_id):
        """Move ``name`` from ``last_tick_at`` (None: never ticked) to ``tick_at``; True when this
        call won (compare-and-set: a concurrent maintainer that read the same state gets False)."""
        rows = self.filter(name=name)
        rows = rows.filter(last_tick_at__isnull=True) if last_tick_at is None else rows.filter(last_tick_at=last_tick_at)
        return rows.update(last_tick_at=tick_at, last_job_id=job_id) == 1


class PeriodicTick(models.Model):
    """How far one periodic schedule has been enqueued (the ``periodic`` duty's cursor).

    Ticks after ``max(first_seen_at, last_tick_at)`` and up to the store clock are due; the duty
    moves ``last_tick_at`` and inserts the ticks' jobs in one transaction.
    """

    name = models.CharField(max_length=100, primary_key=True)
    first_seen_at = models.DateTimeField()
    last_tick_at = models.DateTimeField(null=True, blank=True)
    last_job_id = models.UUIDField(null=True, blank=True)
    # Paused by an operator (store clock): the duty enqueues none of its ticks until resumed.
    paused_at = models.DateTimeField(null=True, blank=True)

    objects = PeriodicTickQuerySet.as_manager()

    class Meta:
        db_table = "headgate_periodic_tick"
        ordering = ["name"]

    def __str__(self):
        return f"{self.name}: {self.last_tick_at}"


# -- compliance data lifetime (DESIGN §18; django_headgate/compliance/) -------------------------


class LegalHold(models.Model):
    """A legal hold: the jobs carrying ``tag``, or those listed in :class:`LegalHoldJob`, are never
    swept, pruned or erased while ``released_at`` is NULL. The row is the hold's log: who placed
    it and why, who released it and when. Written through ``compliance/holds.py`` only."""

    tag = models.CharField(max_length=100, null=True, blank=True)
    reason = models.TextField()
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    released_by = models.CharField(max_length=150, null=True, blank=True)
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "headgate_legal_hold"
        ordering = ["-id"]
        permissions = [("manage_legal_hold", "Can place and release legal holds")]

    def __str__(self):
        target = f"tag {self.tag}" if self.tag else "listed jobs"
        return f"hold {self.pk} on {target}{' (released)' if self.released_at else ''}"


class LegalHoldJob(models.Model):
    """One job id named by a :class:`LegalHold` placed with ``job_ids=``."""

    hold = models.ForeignKey(LegalHold, on_delete=models.CASCADE, related_name="jobs")
    job_id = models.UUIDField()

    class Meta:
        db_table = "headgate_legal_hold_job"
        indexes = [
            # Sweep, prune and erasure: is this job id held?
            models.Index(fields=["job_id"], name="headgate_hold_job_idx"),
        ]


class HeldArchivedJob(ArchivedJobColumns):
    """An archived job kept past its month's prune because a legal hold covered it: pruning a
    month moves its held rows here (same columns as :class:`ArchivedJob`) before the TRUNCATE.
    Rows whose holds are all released go when ``release_hold`` runs."""

    class Meta:
        db_table = "headgate_job_archive_held"
        verbose_name = "held archived job"
        ordering = ["-evicted_at_ms"]
        indexes = [models.Index(fields=["job_id"], name="headgate_held_job_idx")]

    def __str__(self):
        return f"{self.task} [{self.terminal_state}] {self.job_id} (held)"


class Erasure(models.Model):
    """One erasure of a data subject's payloads by tag (GDPR article 17): who asked, when, why,
    and how many rows of each table were blanked. ``finished_at`` is NULL while it runs (a killed
    erasure is resumed by running it again, which completes this row)."""

    tag = models.CharField(max_length=100)
    reason = models.TextField()
    requested_by = models.CharField(max_length=150)
    override_hold = models.BooleanField(default=False)
    #: Rows blanked per table: ``{"headgate_job": n, "headgate_job_archive": n, ...}``.
    counts = models.JSONField(default=dict)
    #: Where a killed erasure resumes: the last key done per table (internal).
    cursor = models.JSONField(default=dict)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "headgate_erasure"
        ordering = ["-id"]

    def __str__(self):
        return f"erasure {self.pk} of tag {self.tag}"


class ArchiveKey(models.Model):
    """The data key of one archive month (DESIGN §18): archived rows' payloads are encrypted
    under it, and it is stored only wrapped (encrypted) by a key of HEADGATE["ENCRYPTION"]
    (``key_name``). Shredding empties ``wrapped_key`` and sets ``shredded_at``: the month's
    payloads can no longer be decrypted by anyone."""

    month = models.CharField(max_length=6, unique=True)  # "YYYYMM"
    wrapped_key = models.TextField(blank=True)  # the data key's envelope JSON; "" once shredded
    key_name = models.CharField(max_length=64)  # the HEADGATE["ENCRYPTION"] key that wraps it
    created_at = models.DateTimeField(auto_now_add=True)
    shredded_at = models.DateTimeField(null=True, blank=True)
    shredded_by = models.CharField(max_length=150, blank=True)
    #: The maintainer's sealing pass has been through the rows evicted before this (internal).
    sealed_through_ms = models.BigIntegerField(default=0)

    class Meta:
        db_table = "headgate_archive_key"
        ordering = ["month"]

    def __str__(self):
        return f"archive key of {self.month}" + (" (shredded)" if self.shredded_at else "")


class QueueSample(models.Model):
    """One queue at one pass of the ``dashboard_sample`` duty (store-clock ``sampled_at``): its
    live jobs at that moment (ready = available and due; scheduled = available, due later;
    running; held back) and the jobs that finished since the previous sample (succeeded, dead)
    with their failed attempts that were retried. Pruned after ``DASHBOARD.RETENTION``; the
    dashboard's 24-hour charts read only this table."""

    sampled_at = models.DateTimeField()
    queue = models.CharField(max_length=64)
    available = models.IntegerField(default=0)
    scheduled = models.IntegerField(default=0)
    running = models.IntegerField(default=0)
    held_back = models.IntegerField(default=0)
    succeeded = models.IntegerField(default=0)
    retried = models.IntegerField(default=0)
    dead = models.IntegerField(default=0)

    class Meta:
        db_table = "headgate_queue_sample"
        ordering = ["sampled_at", "queue"]
        indexes = [
            # The dashboard's 24-hour range and the prune's oldest-first batches.
            models.Index(fields=["sampled_at"], name="headgate_sample_at_idx"),
        ]

    def __str__(self):
        return f"{self.queue} at {self.sampled_at:%Y-%m-%d %H:%M}"
