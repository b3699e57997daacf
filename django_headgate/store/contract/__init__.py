"""The sections of the store contract (jobs, heartbeats, sweep and archive, worker, errors), assembled by
:class:`~django_headgate.store.base.BaseStore`.

Two markers declare what a vendor must supply:

- :func:`vendor_supplies` marks an operation every vendor implements itself;
- :func:`runs` names the ``SQL_*`` statements a shared default method executes through
  ``self.sql``: a vendor that keeps the default must define them (one that overrides the method
  need not).

:func:`contract_gaps` lists what a class still lacks; ``BaseStore`` checks it when a vendor class
is defined.
"""

import functools


def vendor_supplies(method):
    """Mark ``method`` as one a vendor must implement; calling the unimplemented one raises."""

    @functools.wraps(method)
    def unimplemented(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must implement {method.__name__}()")

    unimplemented.vendor_supplies = True
    return unimplemented


def runs(*statements):
    """Declare the ``SQL_*`` statements a default method executes (``self.sql.<name>``)."""

    def mark(method):
        method.runs_statements = statements
        return method

    return mark


def contract_gaps(cls, sql):
    """``(missing statement names, missing method names)`` of ``cls`` whose statements are ``sql``."""
    members = [getattr(cls, name, None) for name in dir(cls)]
    methods = sorted(
        member.__name__ for member in members if getattr(member, "vendor_supplies", False)
    )
    needed = {name for member in members for name in getattr(member, "runs_statements", ())}
    statements = sorted(name for name in needed if not isinstance(getattr(sql, name, None), str))
    return statements, methods
