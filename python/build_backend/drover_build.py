"""A PEP 517 / PEP 660 build backend in the standard library, so `pip install ./python` works offline.

It packs `src/drover/` into a pure-Python wheel (or, for `pip install -e`, a wheel with a `.pth` file that
points at `src/`), and the source tree into an sdist. The metadata comes from pyproject.toml's [project].
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "drover"


def _project() -> Dict[str, str]:
    """The string keys of pyproject.toml's [project] table."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib  # Python 3.11+

        table = tomllib.loads(text)["project"]
        return {k: v for k, v in table.items() if isinstance(v, str)}
    except ImportError:  # older Pythons: the table only holds `key = "value"` lines
        section = text.split("[project]", 1)[1].split("\n[", 1)[0]
        return dict(re.findall(r'^(\S+)\s*=\s*"([^"]*)"\s*$', section, flags=re.M))


def _metadata() -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p.get('description', '')}",
        f"Requires-Python: {p.get('requires-python', '>=3.9')}",
        "Provides-Extra: pandas",
        "Requires-Dist: pandas; extra == 'pandas'",
    ]
    if "license" in p:
        lines.append(f"License: {p['license']}")
    return "\n".join(lines) + "\n"


def _dist_info() -> str:
    p = _project()
    return f"{p['name']}-{p['version']}.dist-info"


WHEEL = b"Wheel-Version: 1.0\nGenerator: drover_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _wheel_name() -> str:
    p = _project()
    return f"{p['name']}-{p['version']}-py3-none-any.whl"


def _package_files() -> List[Tuple[str, bytes]]:
    src = ROOT / "src"
    out = []
    for path in sorted((src / PACKAGE).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".typed"):
            out.append((path.relative_to(src).as_posix(), path.read_bytes()))
    return out


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(directory: str, files: List[Tuple[str, bytes]]) -> str:
    info = _dist_info()
    files = files + [
        (f"{info}/METADATA", _metadata().encode()),
        (f"{info}/WHEEL", WHEEL),
    ]
    record = "\n".join(_record_line(n, d) for n, d in files) + f"\n{info}/RECORD,,\n"
    name = _wheel_name()
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as whl:
        for n, d in files + [(f"{info}/RECORD", record.encode())]:
            whl.writestr(zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0)), d)
    return name


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    """Nothing to install before building."""
    return []


get_requires_for_build_sdist = get_requires_for_build_wheel
get_requires_for_build_editable = get_requires_for_build_wheel


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    """Write the .dist-info folder pip reads before building."""
    info = Path(metadata_directory) / _dist_info()
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata(), encoding="utf-8")
    return info.name


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(
    wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None
) -> str:
    """Build the pure-Python wheel of src/drover."""
    return _write_wheel(wheel_directory, _package_files())


def build_editable(
    wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None
) -> str:
    """Build a wheel whose .pth file puts src/ on sys.path (pip install -e)."""
    return _write_wheel(wheel_directory, [(f"{PACKAGE}.pth", f"{ROOT / 'src'}\n".encode())])


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    """Pack the source tree (pyproject.toml, the backend, src/, tests/) with its PKG-INFO."""
    p = _project()
    base = f"{p['name']}-{p['version']}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(ROOT.rglob("*")):
            rel = path.relative_to(ROOT)
            if path.is_file() and "__pycache__" not in rel.parts and not rel.parts[0].startswith("."):
                tar.add(str(path), arcname=f"{base}/{rel.as_posix()}", recursive=False)
        data = _metadata().encode()
        entry = tarfile.TarInfo(f"{base}/PKG-INFO")
        entry.size = len(data)
        tar.addfile(entry, io.BytesIO(data))
    return name
