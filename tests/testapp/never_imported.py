"""A module no test imports: a worker that imported it because a row named it would leave a mark."""

import os

MARKER = os.environ.get("HG_NEVER_IMPORTED_MARKER")
if MARKER:
    with open(MARKER, "w") as marker:
        marker.write("imported\n")


def run():
    raise AssertionError("never_imported.run was called")
