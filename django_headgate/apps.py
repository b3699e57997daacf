from django.apps import AppConfig
from django.db.models.signals import post_migrate


class HeadgateConfig(AppConfig):
    name = "django_headgate"
    label = "headgate"
    verbose_name = "Headgate"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import checks  # noqa: F401  (registers the system checks)
        from .backends import checks as tasks_backend_checks  # noqa: F401  (headgate.E020)
        from .backends.tasks import register_runner
        from .compliance.archive_sealing import connect_archive_sealing
        from .compliance.pending import connect_pending_erasures
        from .conf import validate_settings
        from .operations.tracing import connect_tracing
        from .policies import register_after_migrate
        from .registry.tasks import discover_tasks

        # Built-in and HEADGATE["RETENTION_CLASSES"] classes exist after migrate (and flush).
        post_migrate.connect(register_after_migrate, sender=self, dispatch_uid="headgate.register_classes")
        # Only registered tasks run (DESIGN §5): import every app's tasks module and
        # HEADGATE["TASK_MODULES"] now, in web processes and workers alike. An invalid
        # TASK_MODULES is reported by the system checks (the default, none, is used meanwhile).
        values, _ = validate_settings()
        register_runner()  # the Django Tasks runner: registered from here, the core never imports backends/
        discover_tasks(values["task_modules"])
        connect_pending_erasures()  # jobs an erasure waited for are erased after each sweep pass
        connect_tracing()  # HEADGATE["TRACING"]: the consumer spans' receivers, only when on
        connect_archive_sealing()  # newly archived rows go under their month's data key (encryption on)
