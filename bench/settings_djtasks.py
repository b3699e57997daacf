"""Django settings for the django-tasks peer (django-tasks-db's DatabaseBackend), used only in
bench/.venv-peers. The PostgreSQL database comes from DJTASKS_BENCH_DATABASE_URL."""

import os
from urllib.parse import urlsplit

_url = urlsplit(os.environ["DJTASKS_BENCH_DATABASE_URL"])
DATABASES = {"default": {
    "ENGINE": "django.db.backends.postgresql",
    "NAME": _url.path.lstrip("/"),
    "USER": _url.username or "",
    "PASSWORD": _url.password or "",
    "HOST": _url.hostname or "",
    "PORT": str(_url.port or ""),
}}
SECRET_KEY = "headgate-bench-peer"
DEBUG = False
USE_TZ = True
TIME_ZONE = "UTC"
INSTALLED_APPS = ["django_tasks_db"]
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
