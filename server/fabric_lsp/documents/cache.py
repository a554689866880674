"""The persistent cache of checked files, as ruff's: ``.fabric_lsp_cache/`` at the project root.

An entry is reused when the file's text, its configuration, the analysed Lightning version and
fabric-lsp's version are those it was made with (its *key*), and everything its analysis looked
up is as it was (its *state*): the text of every module it read, the files that could provide a
module name it did not find, the files that mention a name it searched the project for, and the
project listings it read whole (batch scripts, the text files that may run the Fabric CLI, the
notebooks). The
look-ups are those the workspace recorded (:class:`~fabric_lsp.engine.workspace.dependencies.Recorder`),
so an edit re-checks exactly the files whose analysis read what changed.

The cache folder holds its own ``.gitignore``; ``--no-cache`` bypasses it, ``cache-dir`` (in
``[tool.fabric-lsp]``) and ``--cache-dir`` move it. A cache that cannot be read is ignored, one
that cannot be written is left as it was: the check itself never fails because of it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from fabric_lsp import __version__, config, declared_version
from fabric_lsp.config import Config
from fabric_lsp.engine.findings import Finding
from fabric_lsp.engine.python.text import words
from fabric_lsp.engine.workspace.dependencies import BATCH_SCRIPTS, NOTEBOOKS, TEXT_FILES, Dependencies, module_names_of
from fabric_lsp.engine.workspace.files import MAX_FILES, holding, notebook_files, python_files, text_files
from fabric_lsp.own_files import PACKAGE, own_files

CACHE_DIR = ".fabric_lsp_cache"


def cache_directory(config: Config, root: str) -> str:
    """Where the project checked from ``root`` keeps its cache: ``cache-dir`` of its configuration
    (relative to the ``pyproject.toml`` that sets it), else :data:`CACHE_DIR` in ``root``."""
    if config.cache_dir:
        return os.path.abspath(os.path.join(config.root or root, config.cache_dir))
    return os.path.abspath(os.path.join(root, CACHE_DIR))


#: a listing of the cache's own: every Python file of the project (a batch script's check reads
#: the files it launches, found among them by name)
PYTHON_FILES = "python files"
#: a word as `\b` delimits it: `\bname\b` matches a text exactly when `name` is one of its words
WORD = re.compile(r"\w+")
#: bumped when an entry's layout changes (fabric-lsp's version is part of the file name too)
FORMAT = 1


def digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Known:
    """Answers of a run to :meth:`World.mentioning` for words (the paths, in the order of the
    project's Python files), and the digest of every Python file of the project at the time."""

    digests: dict[str, str | None]
    mentions: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Entry:
    """What a check of one file gave, and what it depended on."""

    key: str
    deps: Dependencies
    state: str
    findings: tuple[Finding, ...]
    problems: tuple[str, ...]
    checked: bool


def file_key(text: str, config: Config, named: bool = False, *more: object) -> str:
    """The key of a file's entry: its text and everything besides look-ups its check reads: the
    file's configuration, the analysed Lightning version, whether it was named on the command
    line (an empty file gets a note then), and what the caller adds (``more``)."""
    settings = (config.fingerprint, config.effective_lightning_version, named, *more)
    return digest(f"{FORMAT}\0{settings!r}\0{text}")


def answers(workspace, names: Iterable[str], given: set[str]) -> dict[str, tuple[str, ...]]:
    """Which files of ``workspace`` mention each word of ``names`` not in ``given`` (then added to
    it): the answers an analysis found to :meth:`World.mentioning`, told with its result, so that
    the process keeping the cache reads no file's words (:meth:`World.answered`). ``given`` holds
    the words told before in the results the cache takes first (a process's, for the command
    line; a unit of work's, for the server's workers). ``workspace`` reads the files on disk."""
    fresh = [n for n in names if n not in given and WORD.fullmatch(n)]
    given.update(fresh)
    return {n: tuple(workspace.mentions(n)) for n in fresh}


def engine_version() -> str:
    """fabric-lsp's version, and the state of its own files (a development install that changed
    since an entry was made never reuses it): their names, sizes and modification times; and
    that of pathspec's package file (the cache keeps its reading of ignore files)."""
    stamps: list[tuple] = [_package_stamp("pathspec")]
    for path in own_files():
        st = os.stat(path)
        stamps.append((os.path.relpath(path, PACKAGE), st.st_size, st.st_mtime_ns))
    return f"{__version__}-{digest(repr(stamps))[:12]}"


def _package_stamp(name: str) -> tuple:
    """An installed package's ``__init__`` file, with its size and modification time (found
    without importing it)."""
    found = importlib.util.find_spec(name)
    origin = found.origin if found is not None else None
    try:
        st = os.stat(origin) if origin else None
    except OSError:
        return (name,)
    return (name,) if st is None else (origin, st.st_size, st.st_mtime_ns)


@dataclass
class World:
    """The project as it is now, read once per run and shared by every entry's state."""

    root: str
    texts: dict[str, str | None] = field(default_factory=dict)  # the texts this run read already
    _digests: dict[str, str | None] = field(default_factory=dict)
    _python: list[str] | None = None
    _providers: dict[str, list[str]] | None = None
    _mentioning: dict[str, tuple] = field(default_factory=dict)
    _words: list[tuple[str, frozenset[str]]] | None = None
    _listings: dict[str, tuple] = field(default_factory=dict)
    #: the previous run's answers to :meth:`mentioning` for words, and the digests of the Python
    #: files they were made from (reused for the files unchanged since)
    known: Known | None = None
    _changed: set[str] | None = None
    _answers: dict[tuple[str, str], str] = field(default_factory=dict)

    def digest_of(self, path: str) -> str | None:
        if path not in self._digests:
            text = self._read(path)
            self._digests[path] = None if text is None else digest(text)
        return self._digests[path]

    def _text(self, path: str) -> str:
        return self._read(path) or ""

    def _read(self, path: str) -> str | None:
        """The file's text, read once per run (None: it cannot be read)."""
        if path not in self.texts:
            try:
                with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                    self.texts[path] = fh.read()
            except OSError:
                self.texts[path] = None
        return self.texts[path]

    def python_files(self) -> list[str]:
        if self._python is None:
            self._python = python_files(self.root)
        return self._python

    def providers(self, name: str) -> list[str]:
        """The project's files that could be imported as module ``name``."""
        if self._providers is None:
            self._providers = {}
            for path in self.python_files():
                for n in module_names_of(path):
                    self._providers.setdefault(n, []).append(path)
        return self._providers.get(name, [])

    def mentioning(self, name: str) -> tuple:
        """The project's files whose text mentions ``name`` as a word, with their digests."""
        if name not in self._mentioning:
            if WORD.fullmatch(name):  # a word: among every file's words, read once
                paths = self._mentioning_word(name)
            else:
                word = re.compile(rf"\b{re.escape(name)}\b")
                paths = [p for p in self.python_files() if name in self._text(p) and word.search(self._text(p))]
            self._mentions_are(name, paths)
        return self._mentioning[name]

    def mentioning_all(self, names: Iterable[str]) -> None:
        """Answer :meth:`mentioning` now for each word of ``names`` that no earlier run answered,
        in one pass over the files' words (asked one by one, each looks through every file's
        words: the entries of a cold run ask hundreds)."""
        unanswered = {n for n in names if n not in self._mentioning and WORD.fullmatch(n) and self._earlier(n) is None}
        for name, paths in self._in_words(unanswered).items():
            self._mentions_are(name, paths)

    def _mentions_are(self, name: str, paths: list[str]) -> None:
        self._mentioning[name] = tuple((p, self.digest_of(p)) for p in paths)

    def _earlier(self, name: str) -> tuple | None:
        """The previous run's answer for the word ``name``, where it made one."""
        return self.known.mentions.get(name) if self.known is not None else None

    def _in_words(self, names: set[str]) -> dict[str, list[str]]:
        """The Python files whose words include each of ``names``, in the order of
        :meth:`python_files`: one pass over every file's words."""
        return holding(self.word_sets(), names) if names else {}

    def _mentioning_word(self, name: str) -> list[str]:
        """The Python files whose words include ``name``, in the order of :meth:`python_files`:
        the previous run's answer where it has one, corrected by the words of the files changed,
        added or removed since (no other file's words are read)."""
        before = self._earlier(name)
        if before is None:
            return self._in_words({name})[name]
        changed = self.changed_since_known()
        if not changed:
            return list(before)
        now = self._python_set()
        keep = {p for p in before if p not in changed}
        keep.update(p for p in changed if p in now and name in self._words_of(p))
        return [p for p in self.python_files() if p in keep]

    def changed_since_known(self) -> set[str]:
        """The Python files added, removed or changed since the previous run's answers."""
        if self._changed is None:
            known = self.known.digests if self.known is not None else {}
            now = self._python_set()
            self._changed = {p for p in now if known.get(p) != self.digest_of(p)} | (set(known) - now)
        return self._changed

    def _python_set(self) -> set[str]:
        return set(self.python_files())

    def _words_of(self, path: str) -> frozenset[str]:
        return words(self._text(path))

    def remembered(self) -> Known | None:
        """This run's answers about words, to be reused by the next run (with every Python file's
        digest); None where this run answered none and read no earlier answer (then nothing is
        remembered)."""
        if not self._mentioning and self._changed is None:
            return None
        mentions = {n: tuple(p for p, _ in v) for n, v in self._mentioning.items() if WORD.fullmatch(n)}
        if self.known is not None and self._changed is not None and not self._changed:
            mentions = {**self.known.mentions, **mentions}  # nothing changed: the earlier answers still hold
        return Known({p: self.digest_of(p) for p in self.python_files()}, mentions)

    def prepare(self) -> None:
        """Read now what keeping this run's entries will read (a thread does it while workers
        analyse): where no earlier run's answers are known, every Python file's digest (the
        analyses tell which files mention their words: :meth:`answered`)."""
        if self.known is None:
            for path in self.python_files():
                self.digest_of(path)

    def answered(self, answers: dict[str, tuple[str, ...]]) -> None:
        """Take the analyses' answers to :meth:`mentioning` for words, where none is made yet:
        their workspaces list the same files and read the same words of them
        (:func:`~fabric_lsp.engine.workspace.files.python_files`,
        :func:`~fabric_lsp.engine.python.text.words`)."""
        for name, paths in answers.items():
            if name not in self._mentioning:
                self._mentions_are(name, list(paths))

    def word_sets(self) -> list[tuple[str, frozenset[str]]]:
        """Every Python file of the project with its words, in the order of :meth:`python_files`
        (read once per run: a word is looked for in each, ~40 ns a file)."""
        if self._words is None:
            self._words = [(path, self._words_of(path)) for path in self.python_files()]
        return self._words

    def listing(self, kind: str) -> tuple:
        if kind not in self._listings:
            listings = {
                BATCH_SCRIPTS: _script_paths,
                TEXT_FILES: text_files,
                NOTEBOOKS: lambda root: notebook_files(root, MAX_FILES),
                PYTHON_FILES: lambda _: self.python_files(),
            }
            paths = listings[kind](self.root) if kind in listings else []
            self._listings[kind] = tuple((p, self.digest_of(p)) for p in paths)
        return self._listings[kind]

    def state(self, deps: Dependencies) -> str:
        """A digest of what ``deps`` looked up, as the project is now."""
        parts: list[object] = [sorted((p, self.digest_of(p)) for p in deps.paths)]
        parts += [(n, self._answer("providers", n, self.providers)) for n in sorted(deps.missing)]
        parts += [(n, self._answer("mentioning", n, self.mentioning)) for n in sorted(deps.mentions)]
        parts += [(k, self._answer("listing", k, self.listing)) for k in sorted(deps.listings)]
        return digest(repr(parts))

    def _answer(self, kind: str, name: str, ask: Callable[[str], object]) -> str:
        """A digest of the answer to a project-wide question (the files providing a module, those
        mentioning a word, a listing), made once per run: many entries' states hold the same one."""
        key = (kind, name)
        if key not in self._answers:
            self._answers[key] = digest(repr(ask(name)))
        return self._answers[key]


def _script_paths(root: str) -> list[str]:
    from fabric_lsp.engine.program.batch_scripts import script_paths  # only where a check listed them

    return script_paths(root)


class Cache:
    """The entries of one project root, loaded at the start of a run and saved at its end."""

    def __init__(self, directory: str, root: str, environment: str | None) -> None:
        self.directory = directory
        name = digest(f"{os.path.abspath(root)}\0{environment or ''}")[:16]
        self.engine = engine_version()
        self.path = os.path.join(directory, __version__, f"{name}.pickle")
        loaded = self._load()
        entries, known = loaded.get("entries"), loaded.get("known")
        self.entries: dict[str, Entry] = entries if isinstance(entries, dict) else {}
        self.world = World(os.path.abspath(root), known=known if isinstance(known, Known) else None)
        self.hits = 0
        declared_version.recall(loaded.get("declared"))  # each used while its files stay the same
        config.recall_translations(loaded.get("ignore patterns"))

    def _load(self) -> dict:
        try:
            with open(self.path, "rb") as fh:
                loaded = pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError, TypeError):
            return {}
        if not isinstance(loaded, dict) or loaded.get("format") != FORMAT or loaded.get("engine") != self.engine:
            return {}
        return loaded

    def get(self, path: str, key: str) -> Entry | None:
        """The entry of ``path`` if its key and its look-ups' state are those of now (a hit)."""
        if not self.holds(path, key):
            return None
        self.hits += 1
        return self.entries[path]

    def holds_text(self, path: str, text: str, config: Config) -> bool:
        """:meth:`holds` for ``text`` under ``config``, its key worked out only where ``path`` has
        an entry."""
        return path in self.entries and self.holds(path, file_key(text, config))

    def holds(self, path: str, key: str) -> bool:
        """Whether :meth:`get` would give ``path``'s entry (not counted as a hit)."""
        entry = self.entries.get(path)
        return entry is not None and entry.key == key and self.world.state(entry.deps) == entry.state

    def put(
        self,
        path: str,
        key: str,
        deps: Dependencies,
        findings: Iterable[Finding],
        problems: Iterable[str],
        checked: bool,
    ) -> None:
        self.world.mentioning_all(deps.mentions)  # the words no analysis told about: one pass for all
        self.entries[path] = Entry(key, deps, self.world.state(deps), tuple(findings), tuple(problems), checked)

    def save(self) -> None:
        """Write the entries (atomically; a cache that cannot be written is left as it was)."""
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            ignore = os.path.join(self.directory, ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w", encoding="utf-8") as fh:
                    fh.write("# Automatically created by fabric-lsp.\n*\n")
            fd, tmp = tempfile.mkstemp(prefix=".entries-", dir=os.path.dirname(self.path))
            with os.fdopen(fd, "wb") as fh:
                saved = {
                    "format": FORMAT,
                    "engine": self.engine,
                    "entries": self.entries,
                    "known": self.world.remembered(),
                    "declared": declared_version.remembered(),
                    "ignore patterns": config.remembered_translations(),
                }
                pickle.dump(saved, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except OSError:
            pass


__all__ = [
    "CACHE_DIR",
    "PYTHON_FILES",
    "Cache",
    "cache_directory",
    "Entry",
    "Known",
    "World",
    "answers",
    "digest",
    "file_key",
]
