"""The files ``fabric-lsp check`` checks: the paths named on the command line, folders walked with
``exclude``/``extend-exclude`` and ``.gitignore`` applied, each file with its configuration."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabric_lsp.config import Config, Resolver


#: Always skipped when walking folders, whatever ``exclude`` says.
ALWAYS_SKIP = frozenset({".git", ".hg", ".svn"})


#: The files a folder walk checks: Python files and Jupyter notebooks (as ruff's default include),
#: and batch-job scripts (``*.sh``, ``*.sbatch``, ``*.slurm``: FAB010 reports in them too).
SUFFIXES = (".py", ".pyi", ".ipynb", ".sh", ".sbatch", ".slurm")


@dataclass(frozen=True)
class Task:
    path: str
    shown: str
    config: Config
    named: bool = False  # named on the command line (not found by walking a folder)


def under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Walk:
    """The Python files under one folder named on the command line, skipping what ``exclude`` /
    ``extend-exclude`` and (unless disabled) ``.gitignore`` say. The folder itself is never
    excluded by its own name or its parents' (ruff does the same)."""

    def __init__(self, top: str, resolver: Resolver, respect_gitignore: bool, folders: list[str]) -> None:
        from fabric_lsp.config import GitIgnore

        self.top = top
        self.resolver = resolver
        self.folders = folders  # every folder the walk enters, in order
        self.gitignore = GitIgnore(top) if respect_gitignore else None
        self.anchors: dict = {}

    def excluded(self, entry: str, is_dir: bool, config: Config) -> bool:
        # Patterns are relative to the configuration's folder; but when the named folder is
        # itself excluded there, they apply relative to the named folder instead.
        root = config.root
        if root is None or under(self.top, root):
            key = (config.source, self.top)
            if key not in self.anchors:
                self.anchors[key] = root is None or config.is_excluded(self.top, is_dir=True, root=root)
            if self.anchors[key]:
                root = self.top
        if config.is_excluded(entry, is_dir=is_dir, root=root):
            return True
        return self.gitignore is not None and self.gitignore.ignored(entry, is_dir=is_dir)

    def files(self) -> Iterator[tuple[str, Config]]:
        # symbolic links to folders are not followed: no folder is reached twice, a link loop never
        for dirpath, dirnames, filenames in os.walk(self.top, followlinks=False):
            self.folders.append(dirpath)
            config = self.resolver.for_path(dirpath)
            dirnames[:] = [
                d
                for d in sorted(dirnames)
                if d not in ALWAYS_SKIP and not self.excluded(os.path.join(dirpath, d), True, config)
            ]
            for f in sorted(filenames):
                full = os.path.join(dirpath, f)
                if f.endswith(SUFFIXES) and not self.excluded(full, False, config):
                    yield full, config.for_file(full)


@dataclass(frozen=True)
class Discovered:
    """The files to check, and every folder the walk entered, in order (a run record keeps them)."""

    tasks: list[Task]
    folders: list[str]


def discover(
    paths: Iterable[str],
    resolver: Resolver,
    report,
    *,
    force_exclude: bool = False,
    respect_gitignore: bool = True,
) -> Discovered:
    """The Python files to check under ``paths``, each with its configuration, and the folders
    walked.

    Folders are walked recursively (``*.py``, ``*.pyi``, ``*.ipynb``). A path named on the command line is
    always checked unless ``--force-exclude`` is given (what the pre-commit hook passes).
    """
    tasks: dict[str, Task] = {}
    folders: list[str] = []
    for raw in paths:
        path = os.path.abspath(raw)
        if os.path.isfile(path):
            config = resolver.for_file(path)
            if force_exclude and config.is_excluded(path):
                report.problems.append(
                    f"{display(path)}: note: excluded by `exclude` ({config.source or 'the default excludes'})"
                )
            elif path not in tasks:
                tasks[path] = Task(path, display(path), config, named=True)
        elif os.path.isdir(path):
            if force_exclude and resolver.for_path(os.path.dirname(path)).is_excluded(path, is_dir=True):
                continue
            for full, config in _Walk(path, resolver, respect_gitignore, folders).files():
                tasks.setdefault(full, Task(full, display(full), config))
        else:
            report.problems.append(f"{raw}: error: no such file or directory")
    return Discovered(list(tasks.values()), folders)


def display(path: str) -> str:
    from fabric_lsp.cli.output import display_path

    return display_path(path)
