"""Start-up checks shared by the long-running Headgate commands (worker, maintainer)."""

from django.core.management.base import CommandError

from ..exceptions import InvalidPolicy


def require_configured_classes(start):
    """Run ``start``, the step that registers HEADGATE["RETENTION_CLASSES"] (a Worker's
    ``start_up`` or a MaintenanceRunner's ``prepare``), or stop the command with one clear line.

    A class whose duration in the settings differs from the registered one (durations are
    immutable) raises InvalidPolicy naming the class and both durations; the command reports that
    message as a CommandError instead of a traceback. Other errors pass through."""
    try:
        start()
    except InvalidPolicy as exc:
        raise CommandError(f"HEADGATE['RETENTION_CLASSES'] cannot be applied: {exc}") from exc
