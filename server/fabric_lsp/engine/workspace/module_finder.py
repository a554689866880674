"""Where ``import a.b.c`` finds module ``a.b.c``'s source in the running interpreter, as jedi's
``Script.goto`` on that line finds it, without importing jedi (a tenth of a second) or asking it
(a few milliseconds a look-up).

jedi searches the project's folder, then the environment's ``sys.path``, then the folders from
the importing file up to the project's (``jedi.api.project.Project._get_sys_path`` with
``smart_sys_path``); it asks every finder of ``sys.meta_path`` for the top-level name and, for each
submodule, the finders again with the package's folder (``jedi.inference.compiled.subprocess
.functions._find_module``): a built-in or a compiled module has no source, a frozen one is looked
for along the path. :func:`find_source` does the same for the cases that make up nearly every
look-up — plain packages, modules and namespace packages found by ``importlib``'s ``PathFinder``
— and answers :data:`ASK_JEDI` for the others (a module another finder provides, a package that
extends its own ``__path__``, a zip archive, a buildout project), which jedi then answers as before.
"""

from __future__ import annotations

import importlib.machinery as machinery
import os
import sys
from importlib.machinery import ModuleSpec
from typing import Optional

#: the answer for a look-up this module does not mirror: ask jedi
ASK_JEDI = "ask jedi"
#: jedi loads these as compiled modules whatever their files (``jedi.settings.auto_import_modules``)
_AUTO_IMPORTED = frozenset({"gi"})
#: what a package's ``__init__`` holds when it extends its own ``__path__`` (jedi then searches
#: every folder of ``sys.path`` of its name: ``ModuleValue.py__path__``)
_EXTENDS_PATH = ("declare_namespace(__name__)", "extend_path(__path__")


def subprocess_sys_path() -> list[str] | None:
    """The ``sys.path`` jedi's subprocess reports for this interpreter (a plain ``python`` with
    this process's environment variables): this process's, with its first entry (the folder of
    the script it runs, or ``-m``'s current folder) that of jedi's subprocess script instead
    (neither where ``PYTHONSAFEPATH`` is set). None where this process was started with flags
    that change ``sys.path`` (``-E``, ``-s``, ``-S``, ``-I``, ``-P``): the subprocess's is not
    known here."""
    flags = sys.flags
    safe = bool(getattr(flags, "safe_path", False))
    if (
        flags.ignore_environment
        or flags.no_user_site
        or flags.no_site
        or flags.isolated
        or safe != bool(os.environ.get("PYTHONSAFEPATH"))
    ):
        return None
    if safe:
        return list(sys.path)
    return [_jedi_subprocess_folder(), *sys.path[1:]]


def _jedi_subprocess_folder() -> str:
    """The folder of jedi's subprocess script (``jedi/inference/compiled/subprocess``), found
    without importing jedi."""
    spec = machinery.PathFinder.find_spec("jedi")
    if spec is None or spec.origin is None:
        return ""
    return os.path.join(os.path.dirname(spec.origin), "inference", "compiled", "subprocess")


def search_path(base: list[str], project: str, importer: str | None) -> list[str]:
    """jedi's ``sys.path`` for a ``goto`` from the file ``importer``: the project's folder, the
    environment's ``base`` (without ``""``), then the folders from the project's (left out) down
    to ``importer``'s; each folder once, where it first comes."""
    folders: list[str] = []
    if importer is not None:
        parent = os.path.dirname(os.path.abspath(importer))
        while parent != project and _is_under(parent, project):
            folders.append(parent)
            parent = os.path.dirname(parent)
    out: list[str] = []
    for entry in [project, *(p for p in base if p != ""), *reversed(folders)]:
        if entry not in out:
            out.append(entry)
    return out


def _is_under(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def in_buildout(project: str, importer: str | None) -> bool:
    """Whether a folder above ``importer`` holds a ``buildout.cfg`` (jedi then adds the paths its
    scripts set up)."""
    if importer is None:
        return False
    parent = os.path.dirname(os.path.abspath(importer))
    while True:
        if os.path.isfile(os.path.join(parent, "buildout.cfg")):
            return True
        up = os.path.dirname(parent)
        if up == parent:
            return False
        parent = up


class _AskJedi(Exception):
    """A look-up this module does not mirror."""


def find_source(qualname: str, path: list[str]) -> str | None:
    """The ``.py`` file of module ``qualname`` along ``path`` (:func:`search_path`), None where
    there is none (not found, built in, compiled, a namespace package), or :data:`ASK_JEDI`."""
    try:
        return _find_source(qualname, path)
    except _AskJedi:
        return ASK_JEDI


def _find_source(qualname: str, path: list[str]) -> str | None:
    parts = qualname.split(".")
    if parts[0] in _AUTO_IMPORTED:
        return None
    origin: str | None = None
    folders: list[str] | None = path
    for i, part in enumerate(parts):
        if folders is None:
            return None  # a module, not a package: no submodule
        found = _find(part, folders, top=i == 0)
        if found is None:
            return None
        origin, folders = found
        if origin is not None and folders is not None and _extends_path(origin):
            raise _AskJedi
    return origin if origin is not None and origin.endswith(".py") else None


#: a module found: its file (None for a namespace package) and, for a package, its folders
Found = tuple[Optional[str], Optional[list[str]]]


def _find(name: str, path: list[str], top: bool) -> Found | None:
    """Module ``name`` (one part of a dotted name) as jedi finds it along ``path``, None where
    there is none (or it has no source: built in, compiled)."""
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        if finder is machinery.PathFinder:
            spec = find_spec(name, path)
        else:  # jedi asks the other finders for a top-level name without its path
            spec = find_spec(name, None if top else path)
            if spec is not None and finder not in (machinery.BuiltinImporter, machinery.FrozenImporter):
                raise _AskJedi  # another finder's module (an editable install …)
        if spec is not None and spec.origin != "frozen":
            return _located(spec)
    if top and name in sys.modules:  # where nothing is found, jedi asks ``importlib.util.find_spec``
        raise _AskJedi
    return None


def _located(spec: ModuleSpec) -> Found | None:
    loader = spec.loader
    if loader is None and not spec.has_location:  # a namespace package
        return None, list(spec.submodule_search_locations._path)  # type: ignore[union-attr]
    if isinstance(loader, machinery.SourceFileLoader):
        origin = loader.get_filename(spec.name)
        return origin, [os.path.dirname(origin)] if loader.is_package(spec.name) else None
    if isinstance(loader, (machinery.ExtensionFileLoader, machinery.SourcelessFileLoader)):
        if loader.is_package(spec.name):
            raise _AskJedi
        return None
    if loader is machinery.BuiltinImporter:
        return None
    raise _AskJedi


def _extends_path(init: str) -> bool:
    try:
        with open(init, encoding="utf-8", errors="replace") as fh:
            head = "".join(line for _, line in zip(range(50), fh))
    except OSError:
        return True
    return any(option in head for option in _EXTENDS_PATH)
