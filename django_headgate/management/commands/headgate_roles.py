"""``manage.py headgate_roles --owner O --runtime R --retention T [--host H]``: print the reviewed
GRANT recipe of the three roles for the connection's vendor (DESIGN §13). It prints; it never
executes anything. See docs/security.md."""

from django.core.management.base import BaseCommand, CommandError

from ...conf import get_settings
from ...exceptions import HeadgateError
from ..roles import build_recipe


class Command(BaseCommand):
    help = "Print the GRANT recipe for Headgate's owner, runtime and retention roles (nothing is executed)."

    def add_arguments(self, parser):
        parser.add_argument("--owner", default="headgate_owner", help="Owner role: migrate, DDL (default headgate_owner).")
        parser.add_argument("--runtime", default="headgate_runtime",
                            help="Runtime role: web, workers, duties (default headgate_runtime).")
        parser.add_argument("--retention", default="headgate_retention",
                            help="Retention role: prune_archive_month (default headgate_retention).")
        parser.add_argument("--host", default="%", help="MariaDB/MySQL account host part (default %%).")
        parser.add_argument("--database", default=None, help="Database alias (default HEADGATE['DATABASE']).")

    def handle(self, *args, **options):
        using = options["database"] or get_settings().database
        try:
            lines = build_recipe(using, owner=options["owner"], runtime=options["runtime"],
                                 retention=options["retention"], host=options["host"])
        except HeadgateError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write("\n".join(lines))
