"""Headgate's Django admin (DESIGN §9), registered on the default admin site.

Importing this package registers every page: job inspection and the dashboard (``jobs``),
the policy pages (``policies``), the read-only archive audit (``archive``), the legal holds
(``legal_holds``), the erasure records (``erasures``) and batches' progress (``batches``).
"""

from . import archive, batches, erasures, flow, jobs, legal_holds, policies  # noqa: F401  (registration happens at import)
