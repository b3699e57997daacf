"""Django settings for the Headgate side of the bench: the database comes from
HG_BENCH_DATABASE_URL, every HEADGATE setting keeps its default except TASK_MODULES (the
bench's no-op task must be registered to run)."""

import os

import environ

DATABASES = {"default": environ.Env.db_url_config(os.environ["HG_BENCH_DATABASE_URL"])}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.mysql":
    DATABASES["default"]["OPTIONS"] = {"charset": "utf8mb4"}

SECRET_KEY = "headgate-bench"
DEBUG = False
USE_TZ = True
TIME_ZONE = "UTC"
INSTALLED_APPS = ["django_headgate"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
HEADGATE = {"TASK_MODULES": ["bench.tasks"]}
# bench/encryption_bench.py: the encrypted queue's keys, for the bench and its worker processes.
if os.environ.get("HG_BENCH_ENCRYPTION"):
    import json

    HEADGATE["ENCRYPTION"] = json.loads(os.environ["HG_BENCH_ENCRYPTION"])
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django_headgate": {"handlers": ["console"], "level": "WARNING"}},
}
