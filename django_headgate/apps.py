from django.apps import AppConfig


class HeadgateConfig(AppConfig):
    name = "django_headgate"
    label = "headgate"
    verbose_name = "Headgate"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import checks  # noqa: F401  (registers the system checks)
