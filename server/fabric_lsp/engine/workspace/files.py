"""The project's files as the engine lists them (the modules other modules may import, the batch
scripts and text files that launch a script): one walk, one list of folders never entered.

The command line's own walk (``cli/discover.py``) is another matter: it applies the user's
``exclude`` and ``.gitignore`` to the files to check; this one lists what an analysis may read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Set
from typing import Callable

from fabric_lsp.facts import NOTEBOOK_SUFFIX

#: folders never entered (besides hidden ones): environments, caches, build output
SKIPPED_DIRS = frozenset({"venv", "node_modules", "__pycache__", "site-packages", "build", "dist"})


def project_files(root: str, wanted: Callable[[str], bool], limit: int, max_depth: int | None = None) -> list[str]:
    """The files under ``root`` whose name ``wanted`` accepts, in sorted walk order
    (:func:`project_folders`), at most ``limit`` files."""
    out: list[str] = []
    for dirpath, filenames in project_folders(root, max_depth):
        out += [os.path.join(dirpath, f) for f in sorted(filenames) if wanted(f)]
        if len(out) >= limit:
            break
    return out[:limit]


def project_folders(root: str, max_depth: int | None = None) -> Iterator[tuple[str, list[str]]]:
    """The folders under ``root`` the engine lists, each with its files, in sorted walk order:
    hidden folders and :data:`SKIPPED_DIRS` skipped, a symbolic link to a folder not entered (the
    walk does not follow them, so no folder is read twice), folders deeper than ``max_depth``
    below ``root`` not entered."""
    base_depth = root.rstrip(os.sep).count(os.sep)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        deep = max_depth is not None and dirpath.count(os.sep) - base_depth >= max_depth
        dirnames[:] = [] if deep else sorted(d for d in dirnames if not d.startswith(".") and d not in SKIPPED_DIRS)
        yield dirpath, filenames


#: At most this many Python files of the project are listed (and searched for call sites).
MAX_FILES = 5000


def python_files(root: str) -> list[str]:
    """The project's ``.py`` files (other modules may import them), at most :data:`MAX_FILES`."""
    return project_files(root, lambda name: name.endswith(".py"), MAX_FILES)


#: text files searched for CLI use: names and suffixes
TEXT_NAMES = ("makefile", "dockerfile", "procfile", "justfile")
TEXT_SUFFIXES = (
    ".md",
    ".rst",
    ".txt",
    ".sh",
    ".bash",
    ".zsh",
    ".slurm",
    ".sbatch",
    ".yaml",
    ".yml",
    ".toml",
    ".cfg",
    ".ini",
    ".json",
    ".ipynb",
)
#: at most this many text files are listed, from at most this many folders below the root
MAX_TEXT_FILES = 400
MAX_TEXT_DEPTH = 4


def text_files(root: str) -> list[str]:
    """The files of the repository that may run a script with the Fabric CLI (READMEs, shell
    scripts, configuration, launcher scripts), searched for the CLI's use
    (:func:`fabric_lsp.engine.program.launch.cli_evidence`)."""
    return project_files(root, _is_text_file, MAX_TEXT_FILES, MAX_TEXT_DEPTH)


def _is_text_file(name: str) -> bool:
    lower = name.lower()
    return lower in TEXT_NAMES or lower.endswith((*TEXT_SUFFIXES, ".py")) or lower.startswith("readme")


def notebook_files(root: str, limit: int) -> list[str]:
    """The project's notebooks (``*.ipynb``, in any case), at any depth, at most ``limit``."""
    return project_files(root, lambda name: name.lower().endswith(NOTEBOOK_SUFFIX), limit)


def analysed_environment(root: str | None, environment_path: str | None) -> str | None:
    """The interpreter the workspace at ``root`` analyses for: ``environment_path``, else the
    project's own ``.venv`` or ``venv``; None for this interpreter."""
    return environment_path or _discover_environment(root)


def _discover_environment(root: str | None) -> str | None:
    if not root:
        return None
    for name in (".venv", "venv"):
        candidate = os.path.join(root, name)
        if os.path.isfile(os.path.join(candidate, "bin", "python")) or os.path.isfile(
            os.path.join(candidate, "Scripts", "python.exe")
        ):
            return candidate
    return None


def holding(word_sets: Iterable[tuple[str, frozenset[str]]], names: Set[str]) -> dict[str, list[str]]:
    """The paths whose words include each of ``names``, in the order of ``word_sets`` (path, its
    :func:`~fabric_lsp.engine.python.text.words`): one pass over them for all the names, not one per name."""
    found: dict[str, list[str]] = {name: [] for name in names}
    if found:
        for path, words_of_path in word_sets:
            for name in names & words_of_path:
                found[name].append(path)
    return found
