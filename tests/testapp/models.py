from django.db import models


class SideEffect(models.Model):
    """One row per successful run of tests.testapp.tasks.record."""

    token = models.CharField(max_length=100)
    job_id = models.CharField(max_length=64)
    attempt = models.IntegerField()
