"""docs/settings.md lists every HEADGATE field with its default (the doc stays true to conf.py)."""

from pathlib import Path

from django_headgate.conf import FIELDS

SETTINGS_DOC = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def test_every_field_is_documented():
    text = SETTINGS_DOC.read_text()
    missing = [f.name for f in FIELDS if "`" + "".join(f"[{p!r}]" for p in f.path).replace("'", '"') + "`" not in text]
    assert missing == []
