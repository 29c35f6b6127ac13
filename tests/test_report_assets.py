"""The pages' style sheets and script are package files (``report/assets/``, ``viewer/assets/``)
read with :mod:`importlib.resources`: found where pingce is installed, embedded in every page as
they are (the script's hash in the page's policy), and shipped in a wheel by pyproject.toml's
package-data."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from importlib.resources import files
from pathlib import Path

import pytest

import pingce
from pingce.report.page import asset, esc, script, script_hash

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "pingce"
EXAMPLES = ROOT / "examples"


def _asset_files() -> list[str]:
    """Every file of an ``assets`` folder in the source tree, as a path inside the package."""
    found = sorted(str(path.relative_to(SRC)) for path in SRC.rglob("assets/*") if path.is_file())
    assert found, "no assets in the source tree"
    return found


def test_every_asset_is_found_as_a_resource_of_the_installed_package() -> None:
    for name in _asset_files():
        *package, folder, file = ["pingce", *Path(name).parts]
        assert folder == "assets"
        resource = files(".".join(package)) / "assets" / file
        assert resource.is_file(), name
        text = asset(file, ".".join(package))
        assert text and text == resource.read_text(encoding="utf-8"), name


def test_the_run_page_embeds_the_style_and_script_files_and_allows_that_script_only() -> None:
    result = pingce.evaluate(
        "contract-risk", EXAMPLES / "contract_risk" / "records.jsonl", bootstrap=0
    )
    page = pingce.report.render_html(result)
    assert f"<style>\n{asset('report.css')}</style>" in page
    assert f"<script>{script('report.js')}</script>" in page
    assert esc(f"script-src {script_hash('report.js')}") in page
    comparison = pingce.compare(
        "contract-risk",
        EXAMPLES / "contract_risk" / "records.jsonl",
        EXAMPLES / "contract_risk" / "records.jsonl",
        bootstrap=0,
    )
    page = pingce.report.render_comparison_html(comparison)
    assert f"<style>\n{asset('report.css')}\n{asset('comparison.css')}</style>" in page
    assert f"<script>{script('comparison.js')}</script>" in page
    assert esc(f"script-src {script_hash('comparison.js')}") in page


def test_a_built_wheel_ships_every_asset(tmp_path: Path) -> None:
    """``pip wheel`` of the source tree (setuptools as installed: no network) holds every file
    of an assets folder where the package looks for it."""
    pytest.importorskip("setuptools")
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(ROOT / name, tree / name)
    shutil.copytree(
        ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    pip = [sys.executable, "-m", "pip", "wheel", str(tree), "--no-deps", "--no-build-isolation"]
    done = subprocess.run(
        [*pip, "--wheel-dir", str(tmp_path / "dist"), "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "dist").glob("pingce-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
    missing = [name for name in _asset_files() if f"pingce/{name}" not in shipped]
    assert not missing, f"pyproject.toml's package-data leaves out {missing}"
