"""``manage.py headgate_rotate_keys``: re-wrap every archive month's data key under
``HEADGATE["ENCRYPTION"]["ACTIVE"]`` (DESIGN §18; docs/compliance.md). Run it after changing
ACTIVE; a retired key stays needed in KEYS until the hot rows encrypted under it are gone."""

from django.core.management.base import BaseCommand, CommandError

from ...compliance.archive_sealing import rotate_keys
from ...exceptions import EncryptionUnavailable, PayloadShredded


class Command(BaseCommand):
    help = "Re-wrap every archive month data key under the ACTIVE encryption key."

    def handle(self, *args, **options):
        try:
            count = rotate_keys()
        except (EncryptionUnavailable, PayloadShredded) as exc:
            raise CommandError(f"refused: {exc.message}", returncode=1) from None
        self.stdout.write(f"{count} archive data keys re-wrapped.")
