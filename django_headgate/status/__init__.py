"""Headgate's status: one reader (:mod:`.reader`) behind ``manage.py headgate_status``
(:mod:`.sections`), the admin dashboard and the admin list filters.

:func:`collect_status` builds the sections against the store clock; the caller passes the
validated settings (commands and the admin read them with ``conf.get_settings()``).
"""

from ..store import get_store
from .sections import (
    SECTIONS, Section, StatusContext, archive_section, health_section, horizon_section, jobs_section,
    maintenance_section, workers_section,
)

__all__ = [
    "SECTIONS", "Section", "StatusContext", "archive_section", "collect_status", "health_section",
    "horizon_section", "jobs_section", "maintenance_section", "workers_section",
]


def collect_status(conf, *, using=None, sections=None):
    """Build every section against the store's clock; returns ``(context, [Section, ...])``."""
    store = get_store(using or conf.database)
    ctx = StatusContext(store=store, conf=conf, now=store.now(), now_ms=store.archive_now_ms())
    return ctx, [build(ctx) for build in (sections or SECTIONS)]
