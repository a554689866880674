"""Builds vscode-client/bundled/libs: fabric-lsp and its runtime dependencies, pure Python only.

    python3 scripts/bundle_server.py      # run by `npm run package` (vscode:prepublish)

The extension runs bundled/tool/fabric_lsp_server.py with the user's interpreter (Python >= 3.9,
any OS), which puts bundled/libs first on sys.path. So the folder must hold every dependency any
such interpreter needs, whatever the environment markers (``tomli; python_version < "3.11"``,
``colorama; platform_system == "Windows"``), and no compiled code. pip evaluates markers for the
Python that runs it only, so the requirement set is closed over the markers of every supported
Python and OS here, then installed in one resolve with ``--only-binary=:all: --implementation py
--abi none --platform any --python-version 3.9``: wheels tagged ``py3-none-any`` that support
Python 3.9. A release whose Requires-Python leaves out a supported Python (pip does not always
check it, e.g. with an index that does not publish it) is excluded and the set resolved again.
Needs network access to PyPI only (and pip in the Python that runs this).
"""

from __future__ import annotations

import email.parser
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from packaging.markers import default_environment
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name
except ImportError:  # packaging is not installed; pip always vendors it
    from pip._vendor.packaging.markers import default_environment  # type: ignore[assignment,no-redef]
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[assignment,no-redef]
    from pip._vendor.packaging.specifiers import SpecifierSet  # type: ignore[assignment,no-redef]
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[assignment,no-redef]

CLIENT = Path(__file__).resolve().parents[1]
REPO = CLIENT.parent
BUNDLED = CLIENT / "bundled"
LIBS = BUNDLED / "libs"
#: The oldest Python the bundle supports (fabric-lsp's requires-python) and the ones markers are
#: evaluated for.
MIN_PYTHON = "3.9"
PYTHONS = [f"3.{minor}" for minor in range(9, 15)]
PLATFORMS = [  # (sys_platform, platform_system, os_name)
    ("linux", "Linux", "posix"),
    ("darwin", "Darwin", "posix"),
    ("win32", "Windows", "nt"),
]
PURE_ONLY = [
    "--only-binary=:all:",
    "--implementation",
    "py",
    "--abi",
    "none",
    "--platform",
    "any",
    "--python-version",
    MIN_PYTHON,
]
#: What pip --target leaves that the bundle does not need: console scripts with the build
#: machine's interpreter in their shebang.
UNNEEDED = ["bin"]
COMPILED = re.compile(r"\.(so|pyd|dylib|dll)$")


def run(*args: str) -> None:
    print("+", " ".join(args), flush=True)
    subprocess.run(args, check=True)


def build_wheel(scratch: Path) -> Path:
    """fabric-lsp's wheel, built from a clean copy of the sources (no stale build/ folder)."""
    source = scratch / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "server", source / "server", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    wheels = scratch / "wheel"
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), str(source))
    (wheel,) = wheels.glob("fabric_lsp-*.whl")
    return wheel


def marker_environments() -> list[dict[str, str]]:
    envs = []
    for python in PYTHONS:
        for sys_platform, system, os_name in PLATFORMS:
            env: dict[str, str] = {key: str(value) for key, value in default_environment().items()}
            env.update(
                python_version=python,
                python_full_version=f"{python}.0",
                implementation_name="cpython",
                platform_python_implementation="CPython",
                sys_platform=sys_platform,
                platform_system=system,
                os_name=os_name,
                extra="",
            )
            envs.append(env)
    return envs


def installed(target: Path) -> dict[str, tuple[str, list[str], str]]:
    """{canonical name: (version, Requires-Dist lines, Requires-Python)} of the distributions in
    ``target``."""
    dists: dict[str, tuple[str, list[str], str]] = {}
    for info in target.glob("*.dist-info"):
        metadata = email.parser.Parser().parsestr((info / "METADATA").read_text(encoding="utf-8"), headersonly=True)
        requires = metadata.get_all("Requires-Dist") or []
        dists[canonicalize_name(metadata["Name"])] = (metadata["Version"], requires, metadata["Requires-Python"] or "")
    return dists


def unsupported_releases(target: Path) -> list[str]:
    """``name!=version`` for the installed releases that do not support every Python in PYTHONS."""
    excluded = []
    for name, (version, _, requires_python) in installed(target).items():
        supported = SpecifierSet(requires_python)
        if not all(supported.contains(f"{python}.0") for python in PYTHONS):
            print(f"bundle_server: {name} {version} requires Python {requires_python}; excluding it", flush=True)
            excluded.append(f"{name}!={version}")
    return excluded


def missing_requirements(target: Path) -> list[str]:
    """Requirements of the installed distributions that some supported Python or OS needs and
    that are not installed (without their markers: they are installed for every platform)."""
    dists = installed(target)
    envs = marker_environments()
    missing = set()
    for _, requires, _ in dists.values():
        for line in requires:
            requirement = Requirement(line)
            if canonicalize_name(requirement.name) in dists:
                continue
            if requirement.marker is None or any(requirement.marker.evaluate(env) for env in envs):
                requirement.marker = None
                missing.add(str(requirement))
    return sorted(missing)


def install(requirements: list[str], target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    run(
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-compile",
        "--target",
        str(target),
        *PURE_ONLY,
        *requirements,
    )


def check_pure(target: Path) -> None:
    compiled = [str(p.relative_to(target)) for p in target.rglob("*") if COMPILED.search(p.name)]
    if compiled:
        sys.exit(f"bundle_server: compiled files in the bundle: {', '.join(compiled)}")
    for wheel in target.glob("*.dist-info/WHEEL"):
        tags = [line.split(":", 1)[1].strip() for line in wheel.read_text().splitlines() if line.startswith("Tag:")]
        if not tags or not all(tag.endswith("-none-any") for tag in tags):
            sys.exit(f"bundle_server: {wheel.parent.name} is not a pure-Python wheel ({tags})")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="fabric-lsp-bundle-") as tmp:
        scratch = Path(tmp)
        requirements = [str(build_wheel(scratch))]
        target = scratch / "libs"
        for _ in range(10):
            install(requirements, target)
            missing = missing_requirements(target)
            if missing:
                print(f"bundle_server: also needed on other Pythons or platforms: {', '.join(missing)}", flush=True)
            more = missing + unsupported_releases(target)
            if not more:
                break
            requirements += more
        else:
            sys.exit(f"bundle_server: the requirements do not settle: {requirements}")
        for name in UNNEEDED:
            shutil.rmtree(target / name, ignore_errors=True)
        check_pure(target)
        if LIBS.exists():
            shutil.rmtree(LIBS)
        LIBS.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(target), str(LIBS))
    versions = ", ".join(f"{name} {version}" for name, (version, _, _) in sorted(installed(LIBS).items()))
    print(f"bundle_server: {LIBS.relative_to(CLIENT)}: {versions}")


if __name__ == "__main__":
    main()
