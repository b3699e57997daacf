"""Headgate's Django admin (DESIGN §9), registered on the default admin site.

Importing this package registers every page: job inspection and the dashboard (``jobs``),
the policy pages (``policies``) and the read-only archive audit (``archive``).
"""

from . import archive, flow, jobs, policies  # noqa: F401  (registration happens at import)
