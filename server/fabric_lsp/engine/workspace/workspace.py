"""The analysed workspace: finds and caches the modules inference reaches.

Modules inside the workspace root are found on disk by their dotted name (also under ``src/``);
anything else where jedi's ``Script.goto`` on an ``import`` line finds it, with the configured
environment's ``sys.path`` (:mod:`~fabric_lsp.engine.workspace.module_finder` finds it so without
jedi where that environment is this interpreter). Only static analysis is done: no analysed module is ever imported
or executed.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from typing import Callable, Union

from fabric_lsp import facts
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.text import words as words_in
from fabric_lsp.engine.workspace import module_finder
from fabric_lsp.engine.workspace.dependencies import Recorder, module_names_of
from fabric_lsp.engine.workspace.files import analysed_environment, holding, python_files

#: The workspace's file list is refreshed at most this often (seconds).
LISTING_TTL = 10.0
#: Modules larger than this are not analysed when reached through an import.
MAX_MODULE_BYTES = 512 * 1024
#: Top-level packages never worth loading (huge, and they define no Fabric).
SKIP_PACKAGES = frozenset(
    {"torch", "numpy", "jax", "tensorflow", "transformers", "scipy", "pandas", "deepspeed", "os", "sys", "typing"}
)
#: What a cached text was read from: (mtime_ns, size) on disk, or ("buffer", hash) of an editor's.
Stamp = Union[tuple[int, int], tuple[str, int]]


def package_root(directory: str | None) -> str | None:
    """The folder above the outermost package that holds ``directory`` (where its imports start)."""
    if not directory:
        return None
    cur = os.path.abspath(directory)
    while os.path.isfile(os.path.join(cur, "__init__.py")):
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    return cur


#: the files that define Lightning's ``Fabric`` class (``lightning.fabric``, ``lightning_fabric``)
FABRIC_SOURCES = (os.path.join("lightning", "fabric", "fabric.py"), os.path.join("lightning_fabric", "fabric.py"))

#: the module an import statement reads (``import a.b``, ``from .c import d``), at any indentation
IMPORT_LINE = re.compile(
    r"^[ \t]*(?:from[ \t]+(?P<module>\.*[\w.]*)[ \t]+import\b|import[ \t]+(?P<plain>[\w., \t]+))", re.MULTILINE
)
_SETUP_WORDS = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in facts.MODEL_SETUP_METHODS) + r")\b")


#: importers followed before :meth:`Workspace.setups_may_reach` gives up and says yes
MAX_IMPORTERS = 64
#: a module named by at least this many files is read ahead (:meth:`Workspace.read_ahead`)
HUB_IMPORTERS = 3


def setup_words_in(text: str) -> bool:
    """Whether ``text`` names a Fabric model-setup method (``setup``, ``setup_module``)."""
    return "setup" in text and _SETUP_WORDS.search(text) is not None


class Workspace:
    def __init__(
        self,
        root: str | None = None,
        environment_path: str | None = None,
        overlay: Callable[[str], str | None] | None = None,
        *,
        one_run: bool = False,
    ) -> None:
        self.root = os.path.abspath(root) if root else None
        self.environment_path = analysed_environment(self.root, environment_path)
        self.overlay = overlay  # path → unsaved editor text, if any
        #: the workspace of a process that makes one short run and runs no other thread (a command
        #: line's process, a worker): jedi may look modules of the running interpreter up here,
        #: without its subprocess, as no other thread imports meanwhile, and keeps every module
        #: it parsed (see :mod:`fabric_lsp.engine.workspace.jedi_environment`)
        self.one_run = one_run
        self._modules: dict[str, tuple[Stamp, ModuleInfo]] = {}
        self._paths: dict[tuple[str, str], str | None] = {}
        self._project = None
        self._environment = None
        self._listing: tuple[float, list[str]] | None = None
        self._texts: dict[str, tuple[Stamp, str]] = {}
        self._lock = threading.RLock()
        self._local = threading.local()  # the recorder of the analysis running in this thread
        self.log: Callable[[str], None] = lambda msg: None
        #: how many changes were announced, in all and per path (see :meth:`epoch_excluding`)
        self._epoch = 0
        #: the workspace's words: path -> (text, its words), and the (path, words) of the current listing
        self._words: dict[str, tuple[str, frozenset[str]]] = {}
        self._index: list[tuple[str, frozenset[str]]] = []
        self._index_key: tuple[int, list[str]] | None = None
        self._mentions: dict[str, list[str]] = {}
        self._order: tuple[list[str], dict[str, int]] | None = None
        self._local_names: tuple[list[str], frozenset[str]] | None = None
        self._setup_cache: tuple[list[tuple[str, frozenset[str]]], set[str]] | None = None
        self._changes_of: dict[str, int] = {}

    # -- dependencies --------------------------------------------------------------------------
    @contextlib.contextmanager
    def recording(self) -> Iterator[Recorder]:
        """Record every lookup this thread makes until the block ends (one analysis)."""
        recorder = Recorder()
        previous = getattr(self._local, "recorder", None)
        self._local.recorder = recorder
        try:
            yield recorder
        finally:
            self._local.recorder = previous

    def _recorder(self) -> Recorder | None:
        return getattr(self._local, "recorder", None)

    def note_lookup(self) -> None:
        """The analysis running in this thread read the workspace beyond its own document: a
        verdict that did is reused only while the workspace is unchanged (``incremental.py``).
        The look-up functions below note themselves; a memo replaying an answer notes it again."""
        self._local.lookups = getattr(self._local, "lookups", 0) + 1

    @property
    def lookups_noted(self) -> int:
        """How many look-ups this thread has noted (compared before and after a verdict)."""
        return getattr(self._local, "lookups", 0)

    def record_listing(self, listing: str) -> None:
        """The analysis under way read one of the project's listings whole (``dependencies.LISTINGS``)."""
        self.note_lookup()
        recorder = self._recorder()
        if recorder is not None:
            recorder.listings.add(listing)

    def _exists(self, path: str) -> bool:
        """A file on disk, or an editor buffer not saved yet."""
        return os.path.isfile(path) or (self.overlay is not None and self.overlay(path) is not None)

    # -- jedi ----------------------------------------------------------------------------------
    @property
    def jedi_project(self):
        if self._project is None:
            import jedi

            self._project = jedi.Project(
                path=self.root or os.getcwd(),
                environment_path=self.environment_path,
                smart_sys_path=True,
                load_unsafe_extensions=False,
            )
        return self._project

    @property
    def jedi_environment(self):
        if self._environment is None:
            import jedi

            try:
                if self.environment_path:
                    self._environment = jedi.create_environment(self.environment_path, safe=False)
                else:
                    self._environment = self._same_process_environment() or jedi.create_environment(
                        sys.executable, safe=False
                    )
            except Exception as exc:  # an invalid environment falls back to the server's own
                self.log(
                    f"fabric-lsp: cannot use environment {self.environment_path!r} ({exc}); using {sys.executable}"
                )
                self._environment = jedi.create_environment(sys.executable, safe=False)
            if self.one_run:  # every parse of jedi's comes after its environment is made
                from fabric_lsp.engine.workspace.jedi_environment import keep_parsed_modules

                keep_parsed_modules()
        return self._environment

    def _same_process_environment(self):
        """The running interpreter without jedi's subprocess, where no other thread imports."""
        if not self.one_run:
            return None
        from fabric_lsp.engine.workspace.jedi_environment import same_process_environment

        return same_process_environment()

    def may_infer_fabric_types(self) -> bool:
        """Whether jedi can infer anything to be a Lightning Fabric here: Lightning is installed
        in the analysed environment, or the workspace holds Fabric's own source (Lightning's
        repository). Where neither is, jedi knows no ``Fabric`` class to infer, and a look-up
        (~30 ms) can only say no."""
        if facts.installed_lightning_version(self.environment_path) is not None:
            return True
        return any(path.endswith(FABRIC_SOURCES) for path in self.python_files())

    def _jedi_module_path(self, qualname: str, from_path: str | None) -> str | None:
        import jedi

        code = f"import {qualname}\n"
        try:
            script = jedi.Script(code, path=from_path, project=self.jedi_project, environment=self.jedi_environment)
            names = script.goto(1, len(code) - 1, follow_imports=True)
        except Exception as exc:
            self.log(f"fabric-lsp: jedi could not resolve {qualname}: {exc}")
            return None
        for name in names:
            path = name.module_path
            if path and str(path).endswith(".py"):
                return str(path)
        return None

    # -- modules -------------------------------------------------------------------------------
    def module_name_for(self, path: str | None) -> str | None:
        if not path or not self.root:
            return None
        path = os.path.abspath(path)
        for base in (os.path.join(self.root, "src"), self.root):
            if path.startswith(base + os.sep):
                rel = os.path.relpath(path, base)
                parts = rel[:-3].split(os.sep) if rel.endswith(".py") else rel.split(os.sep)
                if parts and parts[-1] == "__init__":
                    parts.pop()
                if all(p.isidentifier() for p in parts):
                    return ".".join(parts)
        return None

    def resolve_relative(self, module: ModuleInfo, base: str, level: int) -> str | None:
        self.note_lookup()
        if not module.path:
            return None
        name = module.name or self.module_name_for(module.path)
        if name is None:
            return None
        parts = name.split(".")
        is_package = os.path.basename(module.path) == "__init__.py"
        keep = len(parts) - level + (1 if is_package else 0)
        if keep < 0:
            return None
        prefix = parts[:keep]
        if base:
            prefix = prefix + base.split(".")
        return ".".join(prefix) if prefix else None

    def find_module_path(self, qualname: str, from_module: ModuleInfo | None) -> str | None:
        top = qualname.split(".")[0]
        if top in SKIP_PACKAGES:
            return None
        from_dir = os.path.dirname(from_module.path) if from_module and from_module.path else None
        key = (qualname, from_dir or "")
        with self._lock:
            cached = key in self._paths
            found = self._paths.get(key)
        if not cached:
            found = self._find_module_path(qualname, from_module, from_dir)
            with self._lock:
                self._paths[key] = found
        recorder = self._recorder()
        if recorder is not None:
            if found is None:
                recorder.missing.add(qualname)
            else:
                recorder.paths.add(os.path.abspath(found))
        return found

    def _find_module_path(self, qualname: str, from_module: ModuleInfo | None, from_dir: str | None) -> str | None:
        rel = qualname.replace(".", os.sep)
        bases = [
            b for b in (self.root and os.path.join(self.root, "src"), self.root, from_dir, package_root(from_dir)) if b
        ]
        for base in bases:
            for candidate in (os.path.join(base, rel + ".py"), os.path.join(base, rel, "__init__.py")):
                if self._exists(candidate):
                    return candidate
        top = qualname.split(".")[0]
        if any(self._exists(os.path.join(base, top, "__init__.py")) for base in bases):
            # the workspace's own package, with no such module in it (``pkg.mod.function``):
            # an import of it finds the same package first, so jedi would find nothing else
            return None
        importer = from_module.path if from_module else None
        found = self._found_here(qualname, importer)
        return self._jedi_module_path(qualname, importer) if found == module_finder.ASK_JEDI else found

    def _found_here(self, qualname: str, importer: str | None) -> str | None:
        """Where jedi would find ``qualname`` from ``importer``, found without jedi where the
        analysed environment is this interpreter (:mod:`~fabric_lsp.engine.workspace.module_finder`),
        else :data:`~fabric_lsp.engine.workspace.module_finder.ASK_JEDI`."""
        base = self._own_sys_path
        project = self.root or os.getcwd()
        if base is None or module_finder.in_buildout(project, importer):
            return module_finder.ASK_JEDI
        return module_finder.find_source(qualname, module_finder.search_path(base, project, importer))

    @functools.cached_property
    def _own_sys_path(self) -> list[str] | None:
        """The ``sys.path`` of the analysed environment where it is this interpreter, else None."""
        return None if self.environment_path else module_finder.subprocess_sys_path()

    def load_module_named(self, qualname: str, from_module: ModuleInfo | None = None) -> ModuleInfo | None:
        self.note_lookup()
        path = self.find_module_path(qualname, from_module)
        if path is None:
            return None
        return self.load_path(path, qualname)

    def load_path(self, path: str, name: str | None = None) -> ModuleInfo | None:
        path = os.path.abspath(path)
        recorder = self._recorder()
        if recorder is not None:
            recorder.paths.add(path)
        found = self._stamp(path)
        if found is None:
            return None
        stamp, text = found
        with self._lock:
            cached = self._modules.get(path)
            if cached and cached[0] == stamp:
                return cached[1]
        if text is None:
            try:
                with open(path, "rb") as fh:
                    text = fh.read().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                return None
        module = ModuleInfo(text, path, name or self.module_name_for(path))
        with self._lock:
            self._modules[path] = (stamp, module)
        return module

    def _stamp(self, path: str) -> tuple[Stamp, str | None] | None:
        """What tells the version of the file ``path`` (absolute): the editor's unsaved text (given
        with it) wins over the disk's modification time and size; None for a file that cannot be
        read or is too big to analyse."""
        text = self.overlay(path) if self.overlay else None
        if text is not None:
            return ("buffer", hash(text)), text
        try:
            st = os.stat(path)
        except OSError:
            return None
        if st.st_size > MAX_MODULE_BYTES:
            return None
        return (st.st_mtime_ns, st.st_size), None

    def document_module(self, text: str, path: str | None) -> ModuleInfo:
        """The module of a document under analysis: the workspace's module of its file where that
        holds the same text, else a new one, kept as the file's module when the file holds this
        text (as the command line's documents do) — a file is parsed once for its own analysis
        and for those of the modules that import it."""
        if not path or not path.endswith(".py") or os.path.abspath(path) != path:
            return ModuleInfo(text, path, self.module_name_for(path))
        found = self._stamp(path)
        with self._lock:
            cached = self._modules.get(path)
        if found is not None and cached is not None and cached[0] == found[0] and cached[1].text == text:
            return cached[1]
        module = ModuleInfo(text, path, self.module_name_for(path))
        if found is not None and self._holds(path, found[1], text):
            with self._lock:
                self._modules[path] = (found[0], module)
        return module

    @staticmethod
    def _holds(path: str, unsaved: str | None, text: str) -> bool:
        """Whether the file ``path`` (its unsaved text, when it has one) holds ``text``."""
        if unsaved is not None:
            return unsaved == text
        try:
            with open(path, "rb") as fh:
                return fh.read().decode("utf-8") == text
        except (OSError, UnicodeDecodeError):
            return False

    def holds_on_disk(self, path: str, text: str) -> bool:
        """Whether the file ``path`` holds ``text`` on disk, with no unsaved editor text over it."""
        if self.overlay is not None and self.overlay(path) is not None:
            return False
        return self.text_of(path) == text

    # -- the workspace's files (for call sites in other modules) -------------------------------
    def python_files(self) -> list[str]:
        """The workspace's ``.py`` files (at most :data:`MAX_FILES`), listed at most every
        :data:`LISTING_TTL` seconds."""
        if not self.root:
            return []
        now = time.monotonic()
        with self._lock:
            if self._listing is not None and now - self._listing[0] < LISTING_TTL:
                return self._listing[1]
        files = python_files(self.root)
        with self._lock:
            self._listing = (now, files)
        return files

    def text_of(self, path: str) -> str | None:
        """The text of ``path``: the editor's unsaved buffer, else the file (cached by stamp)."""
        overlay = self.overlay(path) if self.overlay else None
        if overlay is not None:
            return overlay
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            cached = self._texts.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        if st.st_size > MAX_MODULE_BYTES:
            return None
        try:
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        with self._lock:
            self._texts[path] = (stamp, text)
        return text

    def _words_of(self, path: str) -> frozenset[str]:
        """The identifier-like words of ``path``'s text (code, comments and strings alike), kept
        with the text they were read from."""
        text = self.text_of(path)
        if text is None:
            return frozenset()
        with self._lock:
            cached = self._words.get(path)
        if cached is not None and cached[0] is text:
            return cached[1]
        words = words_in(text)
        with self._lock:
            self._words[path] = (text, words)
        return words

    def modules_mentioning(
        self, name: str, exclude: str | None = None, importing: str | None = None
    ) -> list[ModuleInfo]:
        """Parsed modules of the workspace whose text mentions ``name`` (other than ``exclude``).
        With ``importing`` (the path of the module that defines ``name``), only the modules that
        can import it: those that also mention its module's name (``from pkg.mod import name``,
        ``import mod``, ``from .mod import name``) or, for a package's ``__init__.py``, that lie
        in the package (``from . import name``)."""
        return self._load_all(self._paths_to_load(name, exclude, importing))

    def modules_mentioning_at_most(
        self, limit: int, name: str, exclude: str | None, importing: str | None
    ) -> list[ModuleInfo] | None:
        """:meth:`modules_mentioning`, or None (and none parsed) where more than ``limit`` modules
        would be: a function that many modules may call is an API, not a helper to follow."""
        paths = self._paths_to_load(name, exclude, importing)
        return None if len(paths) > limit else self._load_all(paths)

    def count_mentioning(self, name: str, exclude: str | None, importing: str | None) -> int:
        """How many modules :meth:`modules_mentioning` would give (none of them parsed)."""
        return len(self._paths_to_load(name, exclude, importing))

    def _paths_to_load(self, name: str, exclude: str | None, importing: str | None) -> list[str]:
        self.note_lookup()
        recorder = self._recorder()
        if recorder is not None:
            recorder.mentions.add(name)
        skip = os.path.abspath(exclude) if exclude else None
        paths = self._paths_mentioning(name)
        if importing:
            paths = self._importers(paths, os.path.abspath(importing))
        return [p for p in paths if p != skip]

    def _load_all(self, paths: list[str]) -> list[ModuleInfo]:
        return [module for module in map(self.load_path, paths) if module is not None]

    def mentions(self, name: str) -> list[str]:
        """The workspace files whose text mentions the identifier ``name`` (recorded as a look-up)."""
        recorder = self._recorder()
        if recorder is not None:
            recorder.mentions.add(name)
        return self._paths_mentioning(name)

    def importers_of(self, path: str) -> list[str]:
        """The workspace files that may import the module at ``path`` (they name it or one of its
        packages, or lie in its package when it is an ``__init__.py``)."""
        defining = os.path.abspath(path)
        return [p for p in self._importers(None, defining) if p != defining]

    def setups_may_reach(self, path: str | None, text: str) -> bool:
        """Whether a model set up by a Fabric can reach code of the document ``path`` holding
        ``text``: it names a setup method or imports a module of the workspace (which may hand one
        over), or a module that (transitively) imports it names a setup method. A text-level
        answer: a plain PyTorch module is spared parsing and the search for its callers."""
        if setup_words_in(text) or self._imports_workspace_module(text, path):
            return True
        if not path or not self.root:
            return False
        setup_paths = self._setup_paths()
        start = os.path.abspath(path)
        seen = {start}
        frontier = [start]
        while frontier:
            nxt = []
            for current in frontier:
                for importer in self.importers_of(current):
                    if importer in setup_paths:
                        return True
                    if importer not in seen:
                        seen.add(importer)
                        nxt.append(importer)
            if len(seen) > MAX_IMPORTERS:
                return True  # too wide to tell cheaply
            frontier = nxt
        return False

    def _setup_paths(self) -> set[str]:
        """The workspace files that name a setup method (once per state of the word sets)."""
        recorder = self._recorder()
        if recorder is not None:
            recorder.mentions.update(facts.MODEL_SETUP_METHODS)
        sets = self._word_sets()[0]
        if self._setup_cache is None or self._setup_cache[0] is not sets:
            found = {p for p, words in sets if any(w in words for w in facts.MODEL_SETUP_METHODS)}
            self._setup_cache = (sets, found)
        return self._setup_cache[1]

    def _imports_workspace_module(self, text: str, path: str | None = None) -> bool:
        local = self.local_module_names() if self.root else frozenset()
        # the words of the file as the workspace read it, when that is this text
        words = self._words_of(path) if path and self.text_of(path) == text else words_in(text)
        relative = " ." in text or "\t." in text  # a relative import has `from`, blanks, then a dot
        if not relative and local.isdisjoint(words):
            return False  # no relative import, and no word of the text names a workspace module
        for match in IMPORT_LINE.finditer(text):
            for dotted in (match.group("module") or match.group("plain") or "").replace(",", " ").split():
                if dotted.startswith(".") or any(part in local for part in dotted.split(".")):
                    return True
        return False

    def local_module_names(self) -> frozenset[str]:
        """The names under which the workspace's own modules are imported: file stems and package
        folders (cached with the listing)."""
        listing = self.python_files()
        with self._lock:
            if self._local_names is not None and self._local_names[0] is listing:
                return self._local_names[1]
        root = os.path.abspath(self.root) if self.root else ""
        names: set[str] = set()
        for path in listing:
            rel = os.path.relpath(path, root) if root else os.path.basename(path)
            parts = rel[:-3].split(os.sep)
            names.update(p for p in parts if p.isidentifier() and p != "__init__")
        frozen = frozenset(names)
        with self._lock:
            self._local_names = (listing, frozen)
        return frozen

    def _importers(self, paths: list[str] | None, defining: str) -> list[str]:
        """Of ``paths``, those that name the module at ``defining`` or a package whose
        ``__init__.py`` re-exports it (imported as ``from pkg import name``), or, for a package's
        ``__init__.py``, that lie in the package (``from . import name``)."""
        folder, file = os.path.split(defining)
        package = file == "__init__.py"
        inside = folder + os.sep if package else None
        child = os.path.basename(folder) if package else file[:-3]
        names = [child]
        if package:
            folder = os.path.dirname(folder)
        root = os.path.abspath(self.root) if self.root else os.path.dirname(folder)
        # a package is named for the module when its __init__.py re-exports it (names the child)
        while (
            folder.startswith(root) and folder != root and child in self._words_of(os.path.join(folder, "__init__.py"))
        ):
            folder, child = os.path.split(folder)
            names.append(child)
        recorder = self._recorder()
        naming: set[str] = set()
        for name in names:
            if name.isidentifier():
                if recorder is not None:
                    recorder.mentions.add(name)
                naming.update(self._paths_mentioning(name))
        if paths is None:  # of the whole listing: found from the names, in listing order
            if inside is None:
                order = self._listing_order()
                return sorted(naming, key=lambda p: order.get(p, len(order)))
            paths = self.python_files()
        return [p for p in paths if p in naming or (inside is not None and p.startswith(inside))]

    def _listing_order(self) -> dict[str, int]:
        """Each listed file's place in the listing (kept with the listing)."""
        listing = self.python_files()
        with self._lock:
            if self._order is None or self._order[0] is not listing:
                self._order = (listing, {p: i for i, p in enumerate(listing)})
            return self._order[1]

    def reading_ahead(self) -> Iterator[str]:
        """Read what analyses read first, a file at a time (each yielded once read, so that the
        reader may stop between any two and resume later): every file's words, then the modules
        most files may import (:meth:`_hubs`)."""
        for path in self.python_files():
            self._words_of(path)
            yield path
        for path in self._hubs():
            self.load_path(path)
            yield path

    def _hubs(self) -> list[str]:
        """The modules at least :data:`HUB_IMPORTERS` files may import (:meth:`importers_of`),
        those most files may import first."""
        counted = [(len(self.importers_of(path)), path) for path in self.python_files()]
        return [path for n, path in sorted(counted, key=lambda c: -c[0]) if n >= HUB_IMPORTERS]

    def parsed_paths(self) -> list[str]:
        """The files whose modules this workspace holds parsed."""
        with self._lock:
            return list(self._modules)

    def _paths_mentioning(self, name: str) -> list[str]:
        """The workspace files whose text mentions ``name``, in listing order. Identifiers are
        looked up in the files' word sets, brought up to date (by file stamp) once per announced
        change or new listing: a text scan per look-up would make a workspace's analysis
        quadratic."""
        if not name.isidentifier():
            pattern = re.compile(rf"\b{re.escape(name)}\b")
            return [path for path in self.python_files() if pattern.search(self.text_of(path) or "")]
        sets, mentions = self._word_sets()
        found = mentions.get(name)
        if found is None and not mentions and name in self.local_module_names():
            self._index_module_names(sets, mentions)  # the importers of every module, in one pass
            found = mentions.get(name)
        if found is None:  # one pass over the word sets per identifier and index
            found = [path for path, words in sets if name in words]
            with self._lock:
                mentions[name] = found
        return list(found)

    def _index_module_names(self, sets: list[tuple[str, frozenset[str]]], mentions: dict[str, list[str]]) -> None:
        """Fill ``mentions`` for every name a workspace module is imported under: the search for
        a module's importers asks it for each module, one pass over the workspace each (quadratic
        in the number of files) if asked name by name."""
        found = holding(sets, self.local_module_names())
        with self._lock:
            for name, paths in found.items():
                mentions.setdefault(name, paths)

    def _word_sets(self) -> tuple[list[tuple[str, frozenset[str]]], dict[str, list[str]]]:
        """The word set of every file, and the files found per identifier asked so far (both
        rebuilt after an announced change or a new listing)."""
        listing = self.python_files()
        with self._lock:
            if self._index_key is not None and self._index_key[0] == self._epoch and self._index_key[1] is listing:
                return self._index, self._mentions
            key = (self._epoch, listing)
        sets = [(path, self._words_of(path)) for path in listing]
        with self._lock:
            self._index, self._index_key, self._mentions = sets, key, {}
            return sets, self._mentions

    def changed(self, path: str | None = None) -> None:
        """Announce that ``path`` (None: anything) changed — an edited buffer, a saved or created
        file. Cached per-site results that read other modules are kept only while nothing but
        the analysed document itself has changed."""
        with self._lock:
            self._epoch += 1
            if path is not None:
                key = os.path.abspath(path)
                self._changes_of[key] = self._changes_of.get(key, 0) + 1

    def epoch_excluding(self, path: str | None) -> int:
        """The number of changes announced for anything but ``path``."""
        with self._lock:
            own = self._changes_of.get(os.path.abspath(path), 0) if path else 0
            return self._epoch - own

    def invalidate(self, path: str | None = None, *, appeared_or_vanished: bool = False) -> None:
        """Forget what is cached about ``path`` (everything when None). ``appeared_or_vanished``:
        the file was created or deleted (on disk, or as an editor buffer), so the module lookups
        that did not find it, or found it, are forgotten too, and the file list is re-read."""
        self.changed(path)
        with self._lock:
            if path is None:
                self._listing = None
                self._modules.clear()
                self._paths.clear()
                self._texts.clear()
                return
            path = os.path.abspath(path)
            self._modules.pop(path, None)
            self._texts.pop(path, None)
            if appeared_or_vanished:
                self._listing = None
                self._forget_lookups(path)

    def _forget_lookups(self, path: str) -> None:
        names = module_names_of(path)
        stale = [
            key
            for key, found in self._paths.items()
            if key[0] in names or (found is not None and os.path.abspath(found) == path)
        ]
        for key in stale:
            del self._paths[key]
