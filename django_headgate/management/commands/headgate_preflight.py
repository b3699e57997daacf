"""``manage.py headgate_preflight --as runtime|retention|owner``: check the connected role's
privileges against that profile, read-only (DESIGN §13). Prints every missing grant and every
grant the profile must not hold, with the statement that fixes it; exits 1 on any finding."""

from django.core.management.base import BaseCommand, CommandError

from ...conf import get_settings
from ...exceptions import HeadgateError
from ..roles import PROFILES, run_preflight


class Command(BaseCommand):
    help = "Check the connected database role against Headgate's runtime, retention or owner profile."

    def add_arguments(self, parser):
        parser.add_argument("--as", dest="profile", required=True, choices=PROFILES,
                            help="The profile to check the connected role against.")
        parser.add_argument("--database", default=None, help="Database alias (default HEADGATE['DATABASE']).")

    def handle(self, *args, **options):
        using = options["database"] or get_settings().database
        profile = options["profile"]
        try:
            findings = run_preflight(using, profile)
        except HeadgateError as exc:
            raise CommandError(exc.message) from None
        if not findings:
            self.stdout.write(f"preflight {profile}: ok (every privilege the profile needs, none it must not have).")
            return
        for finding in findings:
            self.stdout.write(f"preflight {profile}: {finding}")
        raise CommandError(f"preflight {profile}: {len(findings)} finding(s).", returncode=1)
