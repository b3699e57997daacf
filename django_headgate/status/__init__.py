"""Headgate's status: one reader (:mod:`.reader`) behind ``manage.py headgate_status``
(:mod:`.sections`, with the reports of :mod:`.health`, :mod:`.horizon` and :mod:`.periodic`),
the admin dashboard, the admin list filters and the Prometheus exporter (:mod:`.prometheus`,
which ``headgate_worker --metrics-port`` serves).

:func:`collect_status` builds the sections against the store clock; the caller passes the
validated settings (commands and the admin read them with ``conf.get_settings()``).
"""

from django.db import DatabaseError

from ..store import get_store
from ..store.archive_layout import prepared_layout
from ..store.privileges import denied_table, is_insufficient_privilege, model_tables
from .sections import (
    SECTIONS, Section, StatusContext, archive_section, flow_section, health_section, horizon_section, jobs_section,
    maintenance_section, periodic_section, workers_section,
)

__all__ = [
    "SECTIONS", "Section", "StatusContext", "archive_section", "collect_status", "flow_section", "health_section",
    "horizon_section", "jobs_section", "maintenance_section", "periodic_section", "unreadable_section",
    "workers_section",
]


def collect_status(conf, *, using=None, sections=None, report_unreadable=False):
    """Build every section against the store's clock; returns ``(context, [Section, ...])``.

    With ``report_unreadable``, a section the connected role lacks a privilege for becomes a
    one-line :func:`unreadable_section` (a warning too) and the others are still built;
    otherwise the permission error is raised."""
    store = get_store(using or conf.database)
    prepared_layout(store.alias, refresh=True)  # the admin's process lives on: another may have moved the horizon
    ctx = StatusContext(store=store, conf=conf, now=store.now(), now_ms=store.archive_now_ms())
    built = []
    for build in sections or SECTIONS:
        try:
            built.append(build(ctx))
        except DatabaseError as exc:
            if not (report_unreadable and is_insufficient_privilege(exc, store.alias)):
                raise
            built.append(unreadable_section(build, ctx, exc))
    return ctx, built


def unreadable_section(build, ctx, exc):
    """The section ``build`` could not read for lack of a privilege: one line saying which
    table (a name from Headgate's closed set, never the error's text) and what to run."""
    tables = model_tables() + [partition.table_name for partition in prepared_layout(ctx.store.alias).partitions]
    table = denied_table(exc, tables)
    message = (f"not readable: the connected role lacks SELECT on {table or 'a table it reads'}"
               "; manage.py headgate_preflight --as runtime lists every missing grant.")
    name = build.__name__.removesuffix("_section")
    return Section(name, name.capitalize(), {"unreadable": message}, [message], [f"{name.capitalize()}: {message}"])
