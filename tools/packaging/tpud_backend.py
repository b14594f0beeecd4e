"""tpu-doctor's PEP 517 build backend: `pip install --no-build-isolation .` drives CMake.

Why an in-tree backend and not scikit-build-core, meson-python or setuptools: the package is a
pybind11 module and a C++ executable built by CMake, and the install must work in a fresh venv
with no package index reachable. Debian 12 packages no scikit-build-core; meson-python would mean
a second build system; a venv holds pip and setuptools but not `wheel`, which setuptools 66 needs
to build a wheel. PEP 517 lets a project ship its backend in the tree (`backend-path`), and a
wheel is a zip file with three metadata files, so this backend needs only the standard library,
CMake and the Debian packages scripts/setup.sh installs.

Config settings (`pip install --config-settings KEY=VALUE`; pip >= 23.1 also takes `-C`):
  build-dir   the CMake build directory, relative to the source tree (default `build-wheel`); an
              existing build (e.g. `build`, made by scripts/build.sh) is reused as it is, so a
              package costs no second compile.
  build-type  CMAKE_BUILD_TYPE of a new build directory (default Release).

The wheel holds the `tpudoctor` package (Python sources and the `_core` extension) and the
`tpu-doctor` executable, installed into the environment's bin/.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path
from typing import Iterable, Mapping, Optional

_SOURCE_SKIP = {".git", ".deps", "__pycache__", ".pytest_cache"}


def _project() -> dict:
    with open("pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _dist_name(project: dict) -> str:
    return f"{project['name']}-{project['version']}"


def _metadata(project: dict) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
        f"Requires-Python: {project['requires-python']}",
    ]
    if "license" in project and "text" in project["license"]:
        lines.append(f"License: {project['license']['text']}")
    return "\n".join(lines) + "\n"


def _wheel_tag() -> str:
    """The tag of an extension module for this interpreter: cp311-cp311-linux_x86_64."""
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}{sys.abiflags}-{platform}"


def _setting(config_settings: Optional[Mapping[str, object]], key: str, default: str) -> str:
    value = (config_settings or {}).get(key, default)
    if isinstance(value, list):  # pip passes a repeated -C KEY=... as a list
        value = value[-1]
    return str(value)


def _run(cmd: list) -> None:
    print("tpud_backend:", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)


def _build(build_dir: Path, build_type: str) -> Path:
    """Configures `build_dir` when it is new, builds the CLI and the module, and returns the
    built package folder."""
    if not (build_dir / "CMakeCache.txt").exists():
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(["cmake", "-S", ".", "-B", str(build_dir), *generator,
              f"-DCMAKE_BUILD_TYPE={build_type}", "-DTPUD_BUILD_TESTS=OFF",
              "-DTPUD_BUILD_BENCH=OFF", f"-DPYTHON_EXECUTABLE={sys.executable}"])
    _run(["cmake", "--build", str(build_dir), "-j", str(os.cpu_count() or 1), "--target",
          "tpu-doctor", "tpudoctor_python", "tpudoctor_python_sources"])
    package = build_dir / "python" / "tpudoctor"
    module = package / ("_core" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not module.exists():
        raise RuntimeError(f"{build_dir} holds no {module.name} for this Python "
                           f"({sys.version.split()[0]}): it was configured for another "
                           "interpreter; pass -C build-dir=NEW_DIR")
    return package


def _stripped(path: Path) -> bytes:
    """A binary's bytes without its debug sections (a RelWithDebInfo build is 5x larger)."""
    strip = shutil.which("strip")
    if strip is None:
        return path.read_bytes()
    out = path.with_name(path.name + ".stripped")
    try:
        subprocess.run([strip, "--strip-debug", "-o", str(out), str(path)], check=True)
        return out.read_bytes()
    finally:
        out.unlink(missing_ok=True)


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


class _Wheel:
    """A wheel being written: every file is hashed into RECORD as it is added."""

    def __init__(self, path: Path):
        self._zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self._record: list = []

    def add(self, arcname: str, data: bytes, mode: int = 0o644) -> None:
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self._zip.writestr(info, data)
        self._record.append(_record_line(arcname, data))

    def close(self, record_name: str) -> None:
        self._record.append(f"{record_name},,")
        self._zip.writestr(zipfile.ZipInfo(record_name, date_time=(2020, 1, 1, 0, 0, 0)),
                           "\n".join(self._record) + "\n")
        self._zip.close()


def _package_files(package: Path) -> Iterable[Path]:
    return sorted(p for p in package.iterdir()
                  if p.is_file() and (p.suffix == ".py" or p.name.startswith("_core.")))


def _wheel_file() -> str:
    return f"Wheel-Version: 1.0\nGenerator: tpud_backend\nRoot-Is-Purelib: false\nTag: {_wheel_tag()}\n"


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings=None) -> str:
    """The dist-info without building (pip asks for it first)."""
    project = _project()
    info = Path(metadata_directory) / f"{_dist_name(project)}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata(project))
    (info / "WHEEL").write_text(_wheel_file())
    return info.name


def build_wheel(wheel_directory: str, config_settings=None, metadata_directory=None) -> str:
    project = _project()
    build_dir = Path(_setting(config_settings, "build-dir", "build-wheel"))
    package = _build(build_dir, _setting(config_settings, "build-type", "Release"))
    dist = _dist_name(project)
    name = f"{dist}-{_wheel_tag()}.whl"
    wheel = _Wheel(Path(wheel_directory) / name)
    for f in _package_files(package):
        if f.suffix == ".so":
            wheel.add(f"tpudoctor/{f.name}", _stripped(f), 0o755)
        else:
            wheel.add(f"tpudoctor/{f.name}", f.read_bytes())
    wheel.add(f"{dist}.data/scripts/tpu-doctor", _stripped(build_dir / "tpu-doctor"), 0o755)
    wheel.add(f"{dist}.dist-info/METADATA", _metadata(project).encode())
    wheel.add(f"{dist}.dist-info/WHEEL", _wheel_file().encode())
    wheel.close(f"{dist}.dist-info/RECORD")
    return name


def get_requires_for_build_wheel(config_settings=None) -> list:
    return []  # CMake, a compiler and pybind11 come from Debian (scripts/setup.sh), not from pip


def get_requires_for_build_sdist(config_settings=None) -> list:
    return []


def _source_files() -> Iterable[Path]:
    """What an sdist holds: the files git tracks, or, outside a git checkout, the tree without
    build directories and caches."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], check=True, capture_output=True).stdout
        return sorted(Path(p) for p in listed.decode().split("\0") if p and Path(p).is_file())
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk("."):
            dirs[:] = sorted(d for d in dirs if d not in _SOURCE_SKIP and not d.startswith("build"))
            files += [Path(root, n).relative_to(".") for n in names]
        return sorted(files)


def build_sdist(sdist_directory: str, config_settings=None) -> str:
    project = _project()
    dist = _dist_name(project)
    name = f"{dist}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for f in _source_files():
            tar.add(str(f), arcname=f"{dist}/{f}", recursive=False)
        info = tarfile.TarInfo(f"{dist}/PKG-INFO")
        data = _metadata(project).encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name
