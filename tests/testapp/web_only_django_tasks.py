"""A Django Task in a module that task discovery never imports (Django >= 6.0; see
web_only_tasks.py): the README's first example put its Task in such a module."""

from django.tasks import task as django_task

from django_headgate.backends.tasks import task


@task(max_attempts=5)
def send_welcome_email(user_id):
    return user_id


@django_task(backend="immediate")
def welcome_elsewhere(user_id):
    """A Task of Django's own class, moved to Headgate with ``.using(backend="default")``: its
    job names Headgate's runner, which looks this Task up by path in the worker."""
    return user_id
