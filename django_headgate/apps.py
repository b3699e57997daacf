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
        from .policies import register_after_migrate

        # Built-in and HEADGATE["RETENTION_CLASSES"] classes exist after migrate (and flush).
        post_migrate.connect(register_after_migrate, sender=self, dispatch_uid="headgate.register_classes")
