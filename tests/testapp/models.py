from django.db import models


class SideEffect(models.Model):
    """One row per successful run of tests.testapp.tasks.record."""

    token = models.CharField(max_length=100)
    job_id = models.CharField(max_length=64)
    attempt = models.IntegerField()


class RunInterval(models.Model):
    """One row per run of the flow-control test tasks (tests/testapp/flow_tasks.py): host clock
    seconds, compared only with each other (one host)."""

    label = models.CharField(max_length=100)
    job_id = models.CharField(max_length=64)
    started_at = models.FloatField()
    ended_at = models.FloatField()
