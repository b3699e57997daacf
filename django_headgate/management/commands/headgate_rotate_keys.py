"""``manage.py headgate_rotate_keys``: re-wrap every archive month's data key under
``HEADGATE["ENCRYPTION"]["ACTIVE"]`` and re-encrypt the hot rows under it, in bounded batches
(DESIGN §18; docs/compliance.md). Run it after changing ACTIVE; rows of running jobs are left
(run it again once they ended): the old key may leave KEYS once a run reports none left."""

from django.core.management.base import BaseCommand, CommandError

from ...compliance.archive_sealing import rotate_keys
from ...exceptions import EncryptionUnavailable, PayloadShredded


class Command(BaseCommand):
    help = "Re-wrap every archive data key and re-encrypt the hot rows under the ACTIVE encryption key."

    def handle(self, *args, **options):
        try:
            count, rewritten, skipped = rotate_keys()
        except (EncryptionUnavailable, PayloadShredded) as exc:
            raise CommandError(f"refused: {exc.message}", returncode=1) from None
        self.stdout.write(f"{count} archive data keys re-wrapped; {rewritten} hot rows re-encrypted; "
                          f"{skipped} left (running: run it again once they ended).")
