"""The no-op task of the django-tasks peer (imported only in bench/.venv-peers)."""

from django.tasks import task


@task
def noop():
    return None
