"""The demo's database: make sure it exists before ``migrate`` runs.

SQLite creates its file itself. A PostgreSQL or MariaDB/MySQL database named in DATABASE_URL
that does not exist yet is created on the same server (as Django's test runner does), or the
demo stops with one line saying how to create it. Any other connection failure (server down,
wrong password) is also one line, not a traceback.
"""

from django.core.management.base import CommandError
from django.db import OperationalError

# How each vendor's driver says "no such database" (PostgreSQL's message; MySQL's error 1049).
MISSING_DATABASE = {"postgresql": "does not exist", "mysql": "Unknown database"}


def create_statement(connection, name):
    quoted = connection.ops.quote_name(name)
    if connection.vendor == "mysql":
        return f"CREATE DATABASE {quoted} CHARACTER SET utf8mb4"
    return f"CREATE DATABASE {quoted}"


def how_to_create(connection, name):
    settings = connection.settings_dict
    host, port, user = settings.get("HOST") or "localhost", settings.get("PORT") or "", settings.get("USER") or ""
    if connection.vendor == "mysql":
        return (f"mysql -h {host}{f' -P {port}' if port else ''}{f' -u {user}' if user else ''} "
                f"-e 'CREATE DATABASE `{name}` CHARACTER SET utf8mb4'")
    return f"createdb -h {host}{f' -p {port}' if port else ''}{f' -U {user}' if user else ''} {name}"


def first_line(exc):
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def ensure_database(connection, write):
    """Connect; create the database when the server says it is missing. ``write`` reports."""
    if connection.vendor == "sqlite":
        return
    name = connection.settings_dict["NAME"]
    try:
        connection.ensure_connection()
        return
    except OperationalError as exc:
        if MISSING_DATABASE.get(connection.vendor, "\0") not in str(exc):
            raise CommandError(f"Cannot connect to the {connection.display_name} database {name!r}: "
                               f"{first_line(exc)}") from None
    try:
        with connection._nodb_cursor() as cursor:
            cursor.execute(create_statement(connection, name))
    except Exception as exc:  # noqa: BLE001  (any refusal becomes the one-line advice below)
        raise CommandError(f"The {connection.display_name} database {name!r} does not exist and could not "
                           f"be created ({first_line(exc)}); create it with: {how_to_create(connection, name)}"
                           ) from None
    write(f"Created the {connection.display_name} database {name!r}.")
    connection.close()
