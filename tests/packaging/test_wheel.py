"""The built wheel: every file of the package (templates and static files of any kind included),
the license, the metadata an index page shows, and a clean install into a fresh virtualenv.

Builds with pip (setuptools in an isolated build environment) and makes a venv with ensurepip:
about 20 to 40 s, hence ``slow``. No database is involved, so it runs in the SQLite pass of
``./dev test`` only, not once per database."""

import email
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from django.db import connection

import django_headgate

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "django_headgate"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(connection.vendor != "sqlite",
                       reason="the wheel test uses no database: it runs in the SQLite pass only"),
]


def source_files():
    """Every file of the package in the source tree, as wheel paths (no bytecode)."""
    return {
        path.relative_to(ROOT).as_posix() for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def run(*command, cwd=ROOT):
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    dist = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(dist), str(ROOT))
    (built,) = dist.glob("django_headgate-*.whl")
    return built


def test_wheel_holds_every_package_file_and_the_license(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = source_files() - names
    assert not missing, f"files left out of the wheel: {sorted(missing)}"
    assert any(name.startswith("django_headgate/templates/admin/headgate/") for name in names)
    assert "django_headgate/static/headgate/admin.css" in names
    assert not [name for name in names if name.startswith(("tests/", "example_project/", "bench/"))]
    dist_info = f"django_headgate-{django_headgate.__version__}.dist-info"
    assert f"{dist_info}/licenses/LICENSE" in names


def test_wheel_metadata_reads_well_on_an_index_page(wheel):
    archive = zipfile.ZipFile(wheel)
    (metadata_name,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
    metadata = email.message_from_bytes(archive.read(metadata_name))
    assert metadata["Version"] == django_headgate.__version__
    assert metadata["License-Expression"] == "MIT"
    classifiers = metadata.get_all("Classifier")
    for version in ("5.2", "6.0", "6.1"):
        assert f"Framework :: Django :: {version}" in classifiers
    description = metadata.get_payload()
    assert "pip install" in description
    assert "](docs/" not in description and "](" not in description.replace("](http", "")


def test_wheel_installs_into_a_fresh_venv(wheel, tmp_path):
    target = tmp_path / "venv"
    venv.create(target, with_pip=True)
    python = target / "bin" / "python"
    run(str(python), "-m", "pip", "install", "--no-deps", "--quiet", str(wheel), cwd=tmp_path)
    out = run(str(python), "-c", (
        "import importlib.metadata as m, importlib.resources as r, django_headgate as h; "
        "print(h.__version__, m.version('django-headgate'), "
        "r.files('django_headgate').joinpath('static/headgate/admin.css').is_file())"), cwd=tmp_path)
    version = django_headgate.__version__
    assert out.split() == [version, version, "True"]
