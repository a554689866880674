"""The Lightning version a project declares in its requirements, read from its root's files.

A project checked from a tool's environment (``fabric-lsp`` installed once, as ruff is) has no
Lightning installed beside fabric-lsp; its own files still say which Lightning it runs on. The
files, in this order: ``pyproject.toml`` (``[project] dependencies`` and
``optional-dependencies``, ``[tool.poetry.dependencies]``), ``requirements*.txt`` at the root and
``requirements/*.txt`` (``-r other.txt`` followed), ``setup.py`` (a literal ``install_requires``
list, read with :mod:`ast`, never run), ``setup.cfg`` (``[options] install_requires``),
``environment.yml``/``environment.yaml`` and other conda files at the root (``env*.yml``, ``conda*.yml``,
``requirements*.yml``; conda entries such as ``pytorch-lightning=1.5`` and the
``pip:`` section), ``Pipfile`` and ``Pipfile.lock`` (pipenv), the ``pip install`` lines of the
project's Dockerfiles (``Dockerfile*``, ``*.Dockerfile`` at the root and in ``docker/``: the image
it runs in). Where none of them names Lightning, the requirement and conda files of the root's
folders of dependencies (a folder such as ``deps/`` that holds them and no Python code: not a
sub-project), and where none of those does, the README's install instructions
(``pip install pytorch-lightning==1.7.2``, or a requirement alone on its line, as in a list of
requirements in a code block; not one named in a sentence) or, failing those, the release its prose names first
("requires PyTorch Lightning 1.4.4"). The distributions: ``lightning``, ``pytorch-lightning``,
``lightning-fabric``.

A notebook that installs Lightning in its own cells (``!pip install pytorch-lightning==1.5.2``)
declares the version of its cells (:func:`notebook_declared`), before the project's files and
before what the analysed environment has installed (the cell installs over it).

The declared version is the newest release the specifiers allow, as a fresh ``pip install``
would pick today (an unpinned requirement: the newest the rules know). When several requirements
are found, their intersection decides if it allows a release; otherwise the first requirement
found (in the order above) does. A requirement whose environment marker is false for the running
Python is left out (``pytorch-lightning==1.9.*; python_version < "3.11"``). A line or file that
does not parse is skipped. Files are read once per root while their modification times stay the same.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import math
import os
import re
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from fabric_lsp.facts import KNOWN_LIGHTNING_RELEASES, LIGHTNING_DISTRIBUTIONS

if TYPE_CHECKING:  # ``packaging`` is imported where a requirement names Lightning
    from packaging.markers import Marker
    from packaging.specifiers import SpecifierSet

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10
    import tomli as tomllib

#: the files' modification times are looked at again after this many seconds (a workspace check
#: asks once per file)
STAMP_TTL = 5.0


@dataclass(frozen=True)
class Found:
    """One Lightning requirement of the project: the file (relative to the root) and its text."""

    file: str
    text: str
    specifier: SpecifierSet


@dataclass(frozen=True)
class Declared:
    """The version the project declares, and the requirement it comes from."""

    version: str
    file: str
    requirement: str

    @property
    def where(self) -> str:
        """``requirements.txt: pytorch-lightning==1.5.10``"""
        return f"{self.file}: {self.requirement}"


# -- the version a set of requirements allows ------------------------------------------------------


def newest_allowed(specifier: SpecifierSet) -> str | None:
    """The newest known release (or version the specifier itself names) that ``specifier`` allows."""
    from packaging.version import InvalidVersion, Version

    candidates = {Version(v) for v in KNOWN_LIGHTNING_RELEASES}
    for spec in specifier:
        try:
            candidates.add(Version(spec.version.rstrip(".*")))
        except InvalidVersion:
            continue
    allowed = [v for v in candidates if specifier.contains(v)]
    return str(max(allowed)) if allowed else None


def decide(found: list[Found]) -> Declared | None:
    """The declared version of the requirements found (see the module's documentation)."""
    if not found:
        return None
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    together = SpecifierSet()
    for f in found:
        together &= f.specifier
    best = newest_allowed(together)
    if best is not None:  # cite the requirement that bounds it (each allows ``best``)
        bounding = min(found, key=lambda f: Version(newest_allowed(f.specifier) or best))
        return Declared(best, bounding.file, bounding.text)
    for f in found:
        version = newest_allowed(f.specifier)
        if version is not None:
            return Declared(version, f.file, f.text)
    return None


# -- one requirement string -----------------------------------------------------------------------


def lightning_requirement(text: str, file: str) -> Found | None:
    """``text`` as a Lightning requirement (PEP 508), or None: another distribution or malformed."""
    text = re.split(r"\s#|\s--", text, maxsplit=1)[0].strip()  # a comment, pip's per-line options
    if not text or text.startswith(("#", "-")) or "lightning" not in text.lower():
        return None  # (a name that is not written with `lightning` is no Lightning distribution's)
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    if canonicalize_name(req.name) not in _distributions() or not _marker_holds(req.marker):
        return None
    return Found(file, text, req.specifier)


@lru_cache(maxsize=1)
def _distributions() -> frozenset[str]:
    from packaging.utils import canonicalize_name

    return frozenset(canonicalize_name(n) for n in LIGHTNING_DISTRIBUTIONS)


def _marker_holds(marker: Marker | None) -> bool:
    """Whether a requirement's environment marker holds for the running Python (a marker that
    cannot be evaluated does)."""
    if marker is None:
        return True
    from packaging.markers import UndefinedComparison, UndefinedEnvironmentName

    try:
        return marker.evaluate({"extra": ""})
    except (UndefinedComparison, UndefinedEnvironmentName, ValueError):
        return True


#: a conda entry: ``[channel::]name[ =|==|>=... version[=build]]``
_CONDA = re.compile(r"^(?:[\w.\-]+::)?(?P<name>[A-Za-z0-9][\w.\-]*)\s*(?P<rest>.*)$")


def conda_requirement(text: str, file: str) -> Found | None:
    """A conda entry (``pytorch-lightning=1.5``: 1.5.*; ``pytorch-lightning 1.5.*``) as a requirement."""
    match = _CONDA.match(text.strip())
    if not match:
        return None
    name, rest = match["name"], match["rest"].strip()
    if rest.startswith("=") and not rest.startswith("=="):
        version = rest[1:].split("=", 1)[0].strip()
        rest = f"=={version}" if version.endswith("*") else f"=={version}.*"
    elif rest and rest[0].isdigit():
        rest = "==" + rest.split()[0]
    found = lightning_requirement(name + rest, file)
    return Found(file, text.strip(), found.specifier) if found else None


# -- the files ------------------------------------------------------------------------------------


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _rel(root: str, path: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


def _of_strings(items: object, file: str) -> Iterator[Found]:
    if isinstance(items, str):
        items = items.splitlines()
    if not isinstance(items, (list, tuple)):
        return
    for item in items:
        found = lightning_requirement(item, file) if isinstance(item, str) else None
        if found is not None:
            yield found


def from_pyproject(root: str) -> Iterator[Found]:
    text = _read(os.path.join(root, "pyproject.toml"))
    if text is None:
        return
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return
    project = data.get("project")
    if isinstance(project, dict):
        yield from _of_strings(project.get("dependencies"), "pyproject.toml")
        extras = project.get("optional-dependencies")
        for group in extras.values() if isinstance(extras, dict) else ():
            yield from _of_strings(group, "pyproject.toml")
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    deps = poetry.get("dependencies") if isinstance(poetry, dict) else None
    for name, value in deps.items() if isinstance(deps, dict) else ():
        found = _poetry_requirement(name, value)
        if found is not None:
            yield found


def _poetry_requirement(name: str, value: object) -> Found | None:
    if isinstance(value, dict):
        value = value.get("version", "*")
    if not isinstance(value, str):
        return None
    specifier = ",".join(filter(None, (poetry_constraint(p.strip()) for p in value.split(","))))
    found = lightning_requirement(name + specifier, "pyproject.toml")
    return Found("pyproject.toml", f'{name} = "{value}"', found.specifier) if found else None


def poetry_constraint(part: str) -> str:
    """One poetry constraint as PEP 440: ``^1.5`` → ``>=1.5,<2``, ``~1.5`` → ``>=1.5,<1.6``,
    ``1.5.10`` → ``==1.5.10``, ``*`` → nothing; anything else is kept."""
    if part in ("", "*"):
        return ""
    if part[0] in "^~" and not part.startswith("~="):
        base = part.lstrip("^~").strip()
        numbers = [int(n) for n in re.findall(r"\d+", base)[:3]] or [0]
        if part[0] == "^":
            i = next((i for i, n in enumerate(numbers) if n != 0), len(numbers) - 1)
        else:
            i = min(1, len(numbers) - 1) if len(numbers) > 1 else 0
        upper = [*numbers[:i], numbers[i] + 1]
        return f">={base},<{'.'.join(map(str, upper))}"
    return f"=={part}" if part[0].isdigit() else part


def _listing(folder: str) -> list[str]:
    """The names of ``folder``'s entries as ``glob.glob`` sees them (hidden ones left out; none
    when the folder cannot be listed)."""
    try:
        return [n for n in os.listdir(folder) if not n.startswith(".")]
    except OSError:
        return []


def _matching(folder: str, patterns: Iterable[str], names: list[str] | None = None) -> list[str]:
    """The paths of ``folder``'s entries (``names``, else its :func:`_listing`) that one of the
    glob ``patterns`` (none starting with a dot) matches, as ``glob.glob`` finds them."""
    names = _listing(folder) if names is None else names
    match = _globs(tuple(patterns)).match
    return [os.path.join(folder, n) for n in names if match(os.path.normcase(n))]


@lru_cache(maxsize=16)
def _globs(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One expression that a (``normcase``-d) name matches where one of the glob ``patterns`` does,
    as ``fnmatch.fnmatch`` decides."""
    return re.compile("|".join(fnmatch.translate(os.path.normcase(p)) for p in patterns))


def requirement_files(root: str, names: list[str] | None = None) -> list[str]:
    """``requirements*.txt`` at the root, then ``requirements/*.txt``, each sorted by name
    (``names``: the root's listing, when the caller has it)."""
    names = _listing(root) if names is None else names
    below = sorted(_matching(os.path.join(root, "requirements"), ["*.txt"])) if "requirements" in names else []
    return sorted(_matching(root, ["requirements*.txt"], names)) + below


def from_requirements(root: str) -> Iterator[Found]:
    seen: set[str] = set()
    for path in requirement_files(root):
        yield from _requirements_file(root, path, seen)


#: a requirements file's line that includes another one (``-r base.txt``)
_INCLUDE = re.compile(r"^(?:-r|--requirement)(?:\s+|=)?(\S+)")


def _requirements_file(root: str, path: str, seen: set[str]) -> Iterator[Found]:
    path = os.path.abspath(path)
    if path in seen:
        return
    seen.add(path)
    text = _read(path)
    for line in (text or "").splitlines():
        line = line.strip()
        included = _INCLUDE.match(line)
        if included:
            yield from _requirements_file(root, os.path.join(os.path.dirname(path), included[1]), seen)
            continue
        found = lightning_requirement(line, _rel(root, path))
        if found is not None:
            yield found


def from_setup_py(root: str) -> Iterator[Found]:
    text = _read(os.path.join(root, "setup.py"))
    if text is None:
        return
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    assigned = _module_literals(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "install_requires":
                    yield from _of_strings(_literal(kw.value, assigned), "setup.py")


def _module_literals(tree: ast.Module) -> dict[str, ast.expr]:
    """``NAME = [...]`` at the top of setup.py: ``install_requires=NAME`` is common."""
    out: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            out[stmt.targets[0].id] = stmt.value
    return out


def _literal(node: ast.expr, assigned: dict[str, ast.expr]) -> object:
    if isinstance(node, ast.Name) and node.id in assigned:
        node = assigned[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def from_setup_cfg(root: str) -> Iterator[Found]:
    text = _read(os.path.join(root, "setup.cfg"))
    if text is None:
        return
    import configparser  # only for a project with a setup.cfg

    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text)
        value = parser.get("options", "install_requires", fallback="")
    except configparser.Error:
        return
    yield from _of_strings(value, "setup.cfg")


#: conda environment files at the root, besides ``environment.yml``: ``env.yml``, ``env.cpu.yml``,
#: ``conda.yaml``, ``requirements.yaml``, ...
_CONDA_FILES = (
    "environment*.yml",
    "environment*.yaml",
    "env*.yml",
    "env*.yaml",
    "conda*.yml",
    "conda*.yaml",
    "requirements*.yml",
    "requirements*.yaml",
)


def conda_files(root: str, names: list[str] | None = None) -> list[str]:
    """``environment.yml``, ``environment.yaml``, then the other conda files, sorted by name."""
    found = set(_matching(root, _CONDA_FILES, names))
    first = [os.path.join(root, n) for n in ("environment.yml", "environment.yaml") if os.path.join(root, n) in found]
    return first + sorted(found - set(first))


def from_environment_yml(root: str) -> Iterator[Found]:
    yield from _conda_entries(root, conda_files(root))


def _conda_entries(root: str, paths: list[str]) -> Iterator[Found]:
    for path in paths:
        text, name = _read(path), _rel(root, path)
        for line in (text or "").splitlines():
            item = line.split("#", 1)[0].strip()
            if not item.startswith("- "):
                continue
            item = item[2:].strip().strip("'\"")
            found = lightning_requirement(item, name) or conda_requirement(item, name)
            if found is not None:
                yield found


#: the README files read where no requirement file names Lightning
_READMES = ("README.md", "README.rst", "README.txt", "README", "readme.md", "Readme.md")
#: a requirement written in a README: ``pip install pytorch-lightning==1.7.2``, ``lightning>=2.1``
_README_REQUIREMENT = re.compile(
    r"(?<![\w.\-/])(?:pytorch[-_]lightning|lightning[-_]fabric|lightning)\s*(?:==|~=|>=|<=|<|>)\s*\d[\w.*]*"
    r"(?:\s*,\s*(?:==|~=|>=|<=|<|>)\s*\d[\w.*]*)*",
    re.IGNORECASE,
)
#: prose naming a release: "PyTorch Lightning 1.4.4", "pytorch-lightning v1.6"
_README_RELEASE = re.compile(r"pytorch[ _-]lightning\s*(?:version\s*)?v?(\d+\.\d+(?:\.\d+)?)\b", re.IGNORECASE)


def from_pipfile(root: str) -> Iterator[Found]:
    """A pipenv project's ``Pipfile`` (``[packages]``, ``[dev-packages]``: ``"==1.0.7"``, ``"*"``,
    ``{version = "..."}``) and its ``Pipfile.lock`` (``default``, ``develop``: the ``version``
    ``pipenv install`` installs)."""
    text = _read(os.path.join(root, "Pipfile"))
    try:
        data = tomllib.loads(text) if text else {}
    except (tomllib.TOMLDecodeError, ValueError):
        data = {}
    for section in ("packages", "dev-packages"):
        yield from _pipenv_entries(data.get(section), "Pipfile")
    text = _read(os.path.join(root, "Pipfile.lock"))
    try:
        lock = json.loads(text) if text else {}
    except ValueError:
        lock = {}
    for section in ("default", "develop"):
        yield from _pipenv_entries(lock.get(section) if isinstance(lock, dict) else None, "Pipfile.lock")


def _pipenv_entries(entries: object, file: str) -> Iterator[Found]:
    for name, value in entries.items() if isinstance(entries, dict) else ():
        spec = value.get("version", "*") if isinstance(value, dict) else value
        if isinstance(name, str) and isinstance(spec, str):
            found = lightning_requirement(name + ("" if spec.strip() == "*" else spec.strip()), file)
            if found is not None:
                yield Found(file, f'{name} = "{spec}"', found.specifier)


#: the Dockerfiles read, at the root and in its ``docker/`` folder
_DOCKERFILES = ("Dockerfile*", "*.Dockerfile", "*.dockerfile")
_DOCKER_FOLDER = "docker"


def dockerfiles(root: str, names: list[str] | None = None) -> list[str]:
    """The Dockerfiles at the root, then those in ``docker/``, each sorted by name."""
    names = _listing(root) if names is None else names
    below = sorted(_matching(os.path.join(root, _DOCKER_FOLDER), _DOCKERFILES)) if _DOCKER_FOLDER in names else []
    return [p for p in sorted(_matching(root, _DOCKERFILES, names)) + below if os.path.isfile(p)]


def from_dockerfiles(root: str) -> Iterator[Found]:
    """The Lightning requirements the install commands of the project's Dockerfiles write
    (``RUN pip install pytorch-lightning==1.9.4``, continued lines joined): the image the project
    runs in installs them."""
    for path in dockerfiles(root):
        text = re.sub(r"\\[ \t]*\r?\n", " ", _read(path) or "")  # a line continued with a backslash
        for line in text.splitlines():
            if _INSTALLS.search(line) and not line.lstrip().startswith("#"):
                yield from _written(line, _rel(root, path))


#: how many entries a folder may hold for :func:`dependency_folders` to look through it for Python code
_DEPENDENCY_FOLDER_ENTRIES = 500


def dependency_folders(root: str, names: list[str] | None = None) -> list[str]:
    """The root's folders of dependencies (``deps/``, ``env/``): each holds ``requirements*.txt``
    or conda files and no Python code at all (a folder with code is a sub-project, which declares
    for the files under it), sorted by name."""
    names = _listing(root) if names is None else names
    out = []
    for name in sorted(names):
        folder = os.path.join(root, name)
        if name in ("requirements", _DOCKER_FOLDER) or not os.path.isdir(folder):
            continue  # (read with the root's own files)
        listing = _listing(folder)
        if (_matching(folder, ["requirements*.txt"], listing) or conda_files(folder, listing)) and not _holds_code(
            folder
        ):
            out.append(folder)
    return out


def _holds_code(folder: str) -> bool:
    """Whether ``folder`` holds a Python file or a notebook at any depth (or more entries than are
    looked through: it is not taken for a folder of dependencies)."""
    seen = 0
    for _, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        seen += len(dirs) + len(files)
        if seen > _DEPENDENCY_FOLDER_ENTRIES or any(f.endswith((".py", ".ipynb")) for f in files):
            return True
    return False


def from_dependency_folders(root: str) -> Iterator[Found]:
    """The requirements of the root's folders of dependencies (:func:`dependency_folders`)."""
    seen: set[str] = set()
    for folder in dependency_folders(root):
        for path in sorted(_matching(folder, ["requirements*.txt"])):
            yield from _requirements_file(root, path, seen)
        yield from _conda_entries(root, conda_files(folder))


def from_readme(root: str) -> Iterator[Found]:
    """The requirements a README's install instructions write, else the release its prose names."""
    for name in _READMES:
        text = _read(os.path.join(root, name))
        if not text:
            continue
        found = [f for line in _install_lines(text) for f in _written(line, name)]
        if not found:
            releases = [m.group(1) for m in _README_RELEASE.finditer(text)]
            found = [
                f
                for f in (lightning_requirement(f"pytorch-lightning=={_release(r)}", name) for r in releases[:1])
                if f is not None
            ]
        yield from found
        return


def _written(line: str, file: str) -> Iterator[Found]:
    """The Lightning requirements an install line writes (``pip install pytorch-lightning==1.7.2``)."""
    for m in _README_REQUIREMENT.finditer(line):
        found = lightning_requirement(m.group(0).replace(" ", ""), file)
        if found is not None:
            yield found


#: a README line that installs: ``pip install …``, ``conda install …``
_INSTALLS = re.compile(r"\b(?:pip3?|conda|mamba|uv\s+pip|poetry)\s+(?:install|add)\b", re.IGNORECASE)


def _install_lines(text: str) -> list[str]:
    """The README lines that install something, or that are a requirement on their own (a
    requirements list in a code block): a version named in a sentence (an example, a changelog)
    is not what the project runs."""
    out = []
    for line in text.splitlines():
        bare = line.strip().lstrip("-*$> ").strip("`'\" ")
        if _INSTALLS.search(line) or (bare and _README_REQUIREMENT.fullmatch(bare)):
            out.append(line)
    return out


def _release(version: str) -> str:
    """``1.4.4`` as written; ``1.6`` as any of its patches (``1.6.*``)."""
    return version if version.count(".") >= 2 else version + ".*"


SOURCES = (
    from_pyproject,
    from_requirements,
    from_setup_py,
    from_setup_cfg,
    from_environment_yml,
    from_pipfile,
    from_dockerfiles,
)


def read_declared(root: str) -> Declared | None:
    """The version the project at ``root`` declares, reading its files now (its folders of
    dependencies only where no file at the root names Lightning, a README only where none of
    them does)."""
    found: list[Found] = []
    for source in SOURCES:
        found.extend(_found(source, root))
    for fallback in (from_dependency_folders, from_readme):
        found = found or list(_found(fallback, root))
    return decide(found)


def _found(source, root: str) -> list[Found]:
    try:
        return list(source(root))
    except (OSError, ValueError, RecursionError):  # packaging's InvalidSpecifier is a ValueError
        return []


# -- once per root ----------------------------------------------------------------------------------

#: the files the declared version is read from, as watchers' globs (the server re-checks when
#: one changes)
DECLARATION_GLOBS = (
    "**/pyproject.toml",
    "**/setup.py",
    "**/setup.cfg",
    "**/Pipfile",
    "**/Pipfile.lock",
    "**/requirements*.txt",
    "**/requirements/*.txt",
    *(f"**/{pattern}" for pattern in _CONDA_FILES),
    *(f"**/{pattern}" for pattern in _DOCKERFILES),
    *(f"**/{name}" for name in _READMES),
)


#: a notebook's line that installs: a shell line (``!pip install ...``), a magic (``%pip install``),
#: or the bare ``pip install ...`` IPython runs as the ``%pip`` magic (automagic)
_NOTEBOOK_INSTALL = re.compile(r"^\s*[!%]{0,2}\s*(?:python3?\s+-m\s+)?(?:pip3?|conda|mamba|uv\s+pip)\s+install\b")
_NOTEBOOKS: dict[str, tuple[tuple[int, int], Declared | None]] = {}


def notebook_declared(path: str) -> Declared | None:
    """The Lightning release a notebook installs in its own code cells (``!pip install
    pytorch-lightning==1.5.2``, ``%pip install ...``, a bare ``pip install ...``): what its cells
    run on, whatever the project's files declare. Read again when the file's modification time or
    size changes."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size)
    with _LOCK:
        cached = _NOTEBOOKS.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    declared = decide(list(_notebook_requirements(path)))
    with _LOCK:
        _NOTEBOOKS[path] = (stamp, declared)
    return declared


def _notebook_requirements(path: str) -> Iterator[Found]:
    text = _read(path) or ""
    if "install" not in text or "ightning" not in text:  # most notebooks: no JSON to parse
        return
    try:
        data = json.loads(text)
    except ValueError:
        return
    cells = data.get("cells") if isinstance(data, dict) else None
    for cell in cells if isinstance(cells, list) else ():
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        code = "".join(source) if isinstance(source, list) else source if isinstance(source, str) else ""
        for line in code.splitlines():
            if _NOTEBOOK_INSTALL.match(line):
                yield from _written(line, os.path.basename(path))


def is_declaration(path: str) -> bool:
    """Whether ``path`` is a file the declared version may be read from."""
    path = path.replace(os.sep, "/")
    return any(fnmatch.fnmatch(path, glob) or fnmatch.fnmatch("/" + path, glob) for glob in DECLARATION_GLOBS)


def forget() -> None:
    """Read every root's files again at the next question (one of them changed)."""
    with _LOCK:
        _CACHE.clear()
        _FOLDERS.clear()
        _NOTEBOOKS.clear()


#: the files at a root the declared version is read from, besides requirements and conda files
_NAMED_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "Pipfile.lock")


def _stamps(root: str) -> tuple:
    """The files at ``root`` a declared version is read from (and those its requirements files
    include, wherever they are), with their modification times and sizes."""
    names = _listing(root)
    present = set(names)
    named = [os.path.join(root, n) for n in (*_NAMED_FILES, *_READMES) if n in present]
    out = []
    for path in [
        *named,
        *_with_includes(requirement_files(root, names)),
        *conda_files(root, names),
        *dockerfiles(root, names),
        *(p for f in dependency_folders(root, names) for p in _dependency_files(f)),
    ]:
        try:
            st = os.stat(path)
        except OSError:
            continue
        out.append((path, st.st_mtime_ns, st.st_size))
    return tuple(out)


def _dependency_files(folder: str) -> list[str]:
    return [*_with_includes(sorted(_matching(folder, ["requirements*.txt"]))), *conda_files(folder)]


def _with_includes(paths: list[str]) -> list[str]:
    """Requirements files ``paths``, each followed by those it includes (``-r``), recursively."""
    out: list[str] = []
    todo = [os.path.abspath(p) for p in reversed(paths)]
    while todo:
        path = todo.pop()
        if path in out:
            continue
        out.append(path)
        lines = (_read(path) or "").splitlines()
        included = [m[1] for m in (_INCLUDE.match(line.strip()) for line in lines) if m]
        todo.extend(os.path.abspath(os.path.join(os.path.dirname(path), name)) for name in reversed(included))
    return out


_CACHE: dict[str, tuple[float, tuple, Declared | None]] = {}
_LOCK = threading.Lock()


def declared_lightning_version(root: str) -> Declared | None:
    """:func:`read_declared`, cached by root while its files' modification times stay the same
    (looked at again at most every :data:`STAMP_TTL` seconds)."""
    root = os.path.abspath(root)
    now = time.monotonic()
    with _LOCK:
        cached = _CACHE.get(root)
    if cached is not None and now - cached[0] < STAMP_TTL:
        return cached[2]
    stamps = _stamps(root)
    unchanged = cached is not None and cached[1] == stamps
    # read again where a file changed (nothing to read where none of them is there)
    declared = cached[2] if cached is not None and unchanged else (read_declared(root) if stamps else None)
    with _LOCK:
        _CACHE[root] = (now, stamps, declared)
    return declared


def remembered() -> dict[str, tuple[tuple, Declared | None]]:
    """The versions read so far, by root, each with the state of the files it was read from (for
    :func:`recall` in a later process)."""
    with _LOCK:
        return {root: (stamps, declared) for root, (_, stamps, declared) in _CACHE.items()}


def recall(versions: object) -> None:
    """Take the versions a former process read (:func:`remembered`): each is used only while its
    files are as they were then (they are looked at the first time its root is asked about)."""
    if not isinstance(versions, dict):
        return
    with _LOCK:
        for root, kept in versions.items():
            if isinstance(root, str) and isinstance(kept, tuple) and len(kept) == 2 and root not in _CACHE:
                _CACHE[root] = (-math.inf, *kept)


def declaring_folder(start: str, root: str) -> str | None:
    """The deepest folder from ``start`` up to ``root`` (not included) whose own requirement files
    (not its README) name Lightning: a sub-project of a repository (``week_1/requirements.txt``
    pinning ``pytorch-lightning==1.2.10``) declares its own version for the files under it. None
    where no such folder declares one, or ``start`` is not under ``root``."""
    start, root = os.path.abspath(start), os.path.abspath(root)
    if not start.startswith(root + os.sep):
        return None
    now = time.monotonic()
    with _LOCK:
        cached = _FOLDERS.get((start, root))
    if cached is not None and now - cached[0] < STAMP_TTL:  # as long as each folder's answer is kept
        return cached[1]
    found = _declaring_folder(start, root)
    with _LOCK:
        _FOLDERS[(start, root)] = (now, found)
    return found


#: :func:`declaring_folder`'s answers, by (start, root), with when they were made
_FOLDERS: dict[tuple[str, str], tuple[float, str | None]] = {}


def _declaring_folder(start: str, root: str) -> str | None:
    folder = start
    while folder != root:
        declared = declared_lightning_version(folder)
        if declared is not None and os.path.basename(declared.file) not in _READMES:
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None
