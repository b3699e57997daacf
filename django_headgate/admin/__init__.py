"""Headgate's Django admin (DESIGN §9), registered on the default admin site.

Importing this package registers every page: job inspection and the dashboard (``jobs``),
the policy pages (``policies``), the read-only archive audit (``archive``) and batches' progress
(``batches``).
"""

from . import archive, batches, jobs, policies  # noqa: F401  (registration happens at import)
