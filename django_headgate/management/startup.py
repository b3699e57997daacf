"""Start-up checks shared by the long-running Headgate commands (worker, maintainer)."""

from django.core.management.base import CommandError

from ..exceptions import HeadgateError
from ..policies import register_configured_classes


def require_configured_classes(register=register_configured_classes):
    """Register HEADGATE["RETENTION_CLASSES"], or stop the command with one clear line.

    A class whose duration in the settings differs from the registered one (durations are
    immutable) raises InvalidPolicy naming the class and both durations; the command reports that
    message as a CommandError instead of a traceback. ``register`` is the call that registers
    them (a MaintenanceRunner's ``prepare`` with the settings it was given)."""
    try:
        register()
    except HeadgateError as exc:
        raise CommandError(f"HEADGATE['RETENTION_CLASSES'] cannot be applied: {exc}") from exc
