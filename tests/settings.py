"""Settings for the test suite. DATABASE_URL picks the vendor (default: SQLite in a file, so
worker subprocesses share it)."""

import json
import os
import tempfile
from pathlib import Path

import django
import environ

BASE_DIR = Path(__file__).resolve().parent
env = environ.Env()

DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'headgate-test.sqlite3'}"
DATABASES = {"default": env.db_url_config(DATABASE_URL)}
# A test database of this run's own, so that parallel runs on one server never collide.
# Worker subprocesses of acceptance tests are pointed at it through HG_TEST_DB_NAME.
TEST_DB_SUFFIX = os.environ.get("HG_TEST_DB_SUFFIX", str(os.getpid()))
if os.environ.get("HG_TEST_DB_NAME"):
    DATABASES["default"]["NAME"] = os.environ["HG_TEST_DB_NAME"]
DATABASES["default"]["TEST"] = {"NAME": f"test_headgate_{TEST_DB_SUFFIX}"}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # In the temp directory: SQLite leaves -wal/-shm files beside a dropped test database.
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"test-headgate-{TEST_DB_SUFFIX}.sqlite3")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and os.environ.get("HG_PG_SERVER_SIDE_BINDING"):
    # The prepared-statement options docs/settings.md recommends: the store must work with both.
    DATABASES["default"]["OPTIONS"] = {"server_side_binding": True, "prepare_threshold": 5}
if DATABASES["default"]["ENGINE"] == "django.db.backends.mysql":
    DATABASES["default"].setdefault("OPTIONS", {})["charset"] = "utf8mb4"

# A second alias on the same server, for HEADGATE["DATABASE"] tests (tables on another database).
_default_test_name = DATABASES["default"]["TEST"]["NAME"]
DATABASES["jobs"] = {**DATABASES["default"], "TEST": {"NAME": (
    _default_test_name.replace(".sqlite3", "-jobs.sqlite3") if _default_test_name.endswith(".sqlite3")
    else f"{_default_test_name}_jobs")}}

SECRET_KEY = "headgate-tests"
# The default PBKDF2 hasher spends about 0.4 s of CPU on each test user's password; the admin
# tests create one or more users per test. Django's advice for test settings.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
USE_TZ = True
TIME_ZONE = "UTC"
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",  # the admin's CSS in the browser tests (tests/admin)
    "django_headgate",
    "tests.testapp",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "tests.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
STATIC_URL = "/static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
HEADGATE = {
    "RETRY_BACKOFF_BASE": 0.2,
    "POLL_INTERVAL": 0.2,
    "SHUTDOWN_TIMEOUT": 10,
    # tests.testapp.tasks is found by autodiscovery; these modules are listed.
    "TASK_MODULES": ["tests.testapp.module_tasks", "tests.testapp.job_control_tasks", "tests.testapp.operations_tasks",
                     "tests.testapp.periodic_tasks", "tests.testapp.workflow_tasks"] + (
        ["tests.testapp.django_tasks"] if django.VERSION >= (6, 0) else []),
}
# Worker subprocesses of the stop, start-up and snooze tests set these through the environment.
if os.environ.get("HG_TEST_SHUTDOWN_TIMEOUT"):
    HEADGATE["SHUTDOWN_TIMEOUT"] = float(os.environ["HG_TEST_SHUTDOWN_TIMEOUT"])
if os.environ.get("HG_TEST_MAX_SNOOZES"):
    HEADGATE["MAX_SNOOZES"] = int(os.environ["HG_TEST_MAX_SNOOZES"])
if os.environ.get("HG_TEST_STARTUP_TIMEOUT"):
    HEADGATE["WORKER"] = {"STARTUP_TIMEOUT": float(os.environ["HG_TEST_STARTUP_TIMEOUT"])}
# Erasure subprocesses of the kill-and-resume test (tests/compliance) take small batches.
if os.environ.get("HG_TEST_ERASURE_BATCH_SIZE"):
    HEADGATE["ERASURE"] = {"BATCH_SIZE": int(os.environ["HG_TEST_ERASURE_BATCH_SIZE"])}
# Worker subprocesses of the encryption tests (tests/compliance/test_encryption_worker.py).
if os.environ.get("HG_TEST_ENCRYPTION"):
    HEADGATE["ENCRYPTION"] = json.loads(os.environ["HG_TEST_ENCRYPTION"])
# Worker subprocesses whose signal receivers raise BaseExceptions (tests/testapp/raising_receivers.py).
if os.environ.get("HG_TEST_RAISING_RECEIVERS"):
    HEADGATE["TASK_MODULES"] = [*HEADGATE["TASK_MODULES"], "tests.testapp.raising_receivers"]
# Subprocesses of the PgBouncer tests connect through one of its pools (tests/support/pgbouncer.py).
if os.environ.get("HG_TEST_POOLING"):
    HEADGATE["POOLING"] = {"default": os.environ["HG_TEST_POOLING"]}
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
# Django Tasks framework (tests/tasks_backend). Django 6+ only: on 5.2 this entry is headgate.E020.
if django.VERSION >= (6, 0):
    TASKS = {"default": {
        "BACKEND": "django_headgate.backends.tasks.HeadgateBackend",
        "QUEUES": ["default", "other"],
    }, "immediate": {  # Tasks of Django's own class, moved to Headgate with .using(backend=...)
        "BACKEND": "django.tasks.backends.immediate.ImmediateBackend",
    }}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django_headgate": {"handlers": ["console"], "level": os.environ.get("HG_LOG_LEVEL", "WARNING")}},
}
# The log tests (tests/acceptance/test_worker_logs.py) run commands as a host without LOGGING,
# and with HEADGATE["LOG_FORMAT"].
if os.environ.get("HG_TEST_NO_LOGGING"):
    del LOGGING
if os.environ.get("HG_TEST_LOG_FORMAT"):
    HEADGATE["LOG_FORMAT"] = os.environ["HG_TEST_LOG_FORMAT"]
