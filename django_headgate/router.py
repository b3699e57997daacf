"""Database router: puts the Headgate tables on ``HEADGATE["DATABASE"]``.

Add ``"django_headgate.router.HeadgateRouter"`` to ``DATABASE_ROUTERS`` when that alias is not
``default``; the system check ``headgate.W010`` reminds you.
"""

from .conf import get_database_alias

APP_LABEL = "headgate"


class HeadgateRouter:
    def db_for_read(self, model, **hints):
        if model._meta.app_label == APP_LABEL:
            return get_database_alias()
        return None

    db_for_write = db_for_read

    def allow_relation(self, obj1, obj2, **hints):
        return None

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        if app_label == APP_LABEL:
            return db == get_database_alias()
        return None
