from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "example.demo"
    label = "demo"
    verbose_name = "Headgate demo"
