"""The demo's database: make sure it exists before ``migrate`` runs.

SQLite creates its file itself. A PostgreSQL or MariaDB/MySQL database named in DATABASE_URL
that does not exist yet is created on the same server (as Django's test runner does), or the
demo stops with one line saying how to create it. Any other connection failure (server down,
wrong password) is also one line, not a traceback.
"""

from django.core.management.base import CommandError
from django.db import OperationalError

# How each vendor's driver says "no such database": PostgreSQL's message; MySQL's error 1049, or
# 1044 (access denied to the database), which MariaDB gives a role that may not see whether it exists.
MISSING_DATABASE = {"postgresql": ("does not exist",), "mysql": ("Unknown database", "to database")}
# Names for messages (a MySQL connection's display_name needs a working connection).
VENDOR_NAMES = {"postgresql": "PostgreSQL", "mysql": "MariaDB/MySQL"}


def create_statement(connection, name):
    quoted = connection.ops.quote_name(name)
    if connection.vendor == "mysql":
        return f"CREATE DATABASE {quoted} CHARACTER SET utf8mb4"
    return f"CREATE DATABASE {quoted}"


def how_to_create(connection, name):
    """The shell command that creates the database, run as a role allowed to create databases."""
    settings = connection.settings_dict
    host, port, user = settings.get("HOST") or "localhost", settings.get("PORT") or "", settings.get("USER") or ""
    if connection.vendor == "mysql":
        grant = f" GRANT ALL ON {name}.* TO '{user}'@'%';" if user and user != "root" else ""
        return (f"mysql -h {host}{f' -P {port}' if port else ''} -u root "
                f"-e \"CREATE DATABASE {name} CHARACTER SET utf8mb4;{grant}\"")
    return f"createdb -h {host}{f' -p {port}' if port else ''}{f' -O {user}' if user else ''} {name}"


def first_line(exc):
    """The driver's message, first line only (MySQLdb's errors are ``(code, message)``)."""
    text = exc.args[-1] if exc.args and isinstance(exc.args[-1], str) else str(exc)
    return (text.strip().splitlines() or [type(exc).__name__])[0]


def ensure_database(connection, write):
    """Connect; create the database when the server says it is missing. ``write`` reports."""
    if connection.vendor == "sqlite":
        return
    name = connection.settings_dict["NAME"]
    vendor = VENDOR_NAMES.get(connection.vendor, connection.vendor)
    try:
        connection.ensure_connection()
        return
    except OperationalError as exc:
        if not any(marker in str(exc) for marker in MISSING_DATABASE.get(connection.vendor, ())):
            raise CommandError(f"Cannot connect to the {vendor} database {name!r}: {first_line(exc)}") from None
    try:
        with connection._nodb_cursor() as cursor:
            cursor.execute(create_statement(connection, name))
    except Exception as exc:  # noqa: BLE001  (any refusal becomes the one-line advice below)
        raise CommandError(f"The {vendor} database {name!r} does not exist and could not "
                           f"be created ({first_line(exc)}); create it as a role allowed to, e.g.: {how_to_create(connection, name)}"
                           ) from None
    write(f"Created the {vendor} database {name!r}.")
    connection.close()
