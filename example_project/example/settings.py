"""Settings of the django-headgate example project.

Configured from the environment (django-environ):
  DATABASE_URL       default: a SQLite file next to manage.py; e.g.
                     postgres://postgres@127.0.0.1:5432/test or mysql://root@127.0.0.1:3306/test
  DJANGO_SECRET_KEY  default: a fixed key that is only fit for this local example
  DJANGO_DEBUG       default: true
  HG_LOG_LEVEL       level of the django_headgate loggers (default: INFO)
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent  # example_project/

env = environ.Env()

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="django-headgate-example-not-for-production")
DEBUG = env.bool("DJANGO_DEBUG", default=True)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1"])

# An empty DATABASE_URL counts as unset.
DATABASE_URL = env.str("DATABASE_URL", default="") or f"sqlite:///{BASE_DIR / 'example.sqlite3'}"
DATABASES = {"default": env.db_url_config(DATABASE_URL)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Worker threads write concurrently: wait on locks instead of failing, take the write lock
    # when a transaction starts (no deadlocking lock upgrades), and let readers run beside
    # the writer (WAL).
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL;",
    }
elif DATABASES["default"]["ENGINE"] == "django.db.backends.mysql":
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("charset", "utf8mb4")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_headgate",
    "example.demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "example.urls"
WSGI_APPLICATION = "example.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

HEADGATE = {
    # The demo's flaky task fails once: retry after about half a second, not the default 2 s.
    "RETRY_BACKOFF_BASE": 0.5,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)-7s %(name)s: %(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
    },
    "loggers": {
        "django_headgate": {
            "handlers": ["console"],
            "level": env.str("HG_LOG_LEVEL", default="INFO"),
            "propagate": False,
        },
    },
}
