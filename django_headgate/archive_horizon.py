"""The path docs/operations.md gave ``horizon_privilege_findings`` before the archive's operations
moved into ``archive/`` (now ``django_headgate.archive.horizon``): kept so that deployment
checks written against it go on working. Nothing in the package imports it."""

from .archive.horizon import horizon_privilege_findings

__all__ = ["horizon_privilege_findings"]
