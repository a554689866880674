"""Settings: one schema for ``[tool.fabric-lsp]``, the editor's settings and the command line.

Every key is declared once, as a field of :class:`Config` (its default) with the function that
validates it. A file's configuration is rebuilt from scratch, never merged onto an old one::

    defaults  <-  [tool.fabric-lsp] of the closest pyproject.toml  <-  client layers

where the client layers are the command line's flags (``fabric-lsp check``), or the editor's
latest settings: its ``initializationOptions`` until a ``workspace/didChangeConfiguration`` (or
``workspace/configuration`` answer) replaces them whole. A later layer replaces an earlier one
key by key; a key a layer leaves out (or sets to ``null``) is taken from the layer below, down
to the default. Rule
selection (``select``, ``extend-select``, ``ignore``) follows ruff: each layer's selectors are
applied on top of the rules the layers below enabled, the most specific selector wins, and a
layer's ``select`` starts over. ``per-file-ignores`` then drops rules for matching files.

An invalid value gives one message naming the key and where it came from; that key's default (or
the layer below) applies and everything else still works. Keys are spelled in kebab-case in
``pyproject.toml`` and in camelCase by editors (``reportUnknown``); either spelling is accepted
from the editor.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property, lru_cache
from typing import Any, Callable

from fabric_lsp.declared_version import Declared, declared_lightning_version, declaring_folder, notebook_declared
from fabric_lsp.engine.findings import Finding, Severity, resolve_severity
from fabric_lsp.facts import LATEST_LIGHTNING, installed_lightning_version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10
    import tomli as tomllib

PYPROJECT = "pyproject.toml"
TABLE = "fabric-lsp"
#: The section of the editor's settings (``{"fabric-lsp": {...}}``; a flat object is accepted too).
SECTION = "fabric-lsp"
#: Folders never worth walking into (the default ``exclude``, after ruff's); gitignore-style patterns.
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr/",
    ".direnv/",
    ".eggs/",
    ".fabric_lsp_cache/",
    ".git/",
    ".hg/",
    ".ipynb_checkpoints/",
    ".mypy_cache/",
    ".nox/",
    ".pytest_cache/",
    ".pytype/",
    ".ruff_cache/",
    ".svn/",
    ".tox/",
    ".venv*/",
    "__pycache__/",
    "__pypackages__/",
    "_build/",
    "buck-out/",
    "node_modules/",
    "site-packages/",
    "venv/",
)
SEVERITIES = tuple(s.value for s in Severity)
#: The selector that means every rule.
ALL = "ALL"
_VERSION = re.compile(r"^\d+(\.\d+){0,2}((a|b|rc)\d+)?(\.?(post|dev)\d+)?$")
MAX_DEBOUNCE_MS = 10_000

#: A validated layer: ``{kebab-case key: normalised value}``, only the keys that layer sets.
Layer = Mapping[str, Any]


class ConfigError(ValueError):
    pass


# -- validators: each returns the normalised value or raises ConfigError -------------------------


def rule_codes() -> list[str]:
    """Every rule's code, in the registry's order (read from the rules' prefilters, which import
    none of the rules' checks)."""
    from fabric_lsp.rules.prefilters import PREFILTERS

    return list(PREFILTERS)


def _selector(item: Any, codes: Sequence[str]) -> str:
    if not isinstance(item, str) or not item.strip():
        raise ConfigError(f"expected a rule code or prefix, got {item!r}")
    sel = item.strip().upper()
    if sel != ALL and not any(c.startswith(sel) for c in codes):
        raise ConfigError(f"{item!r} matches no rule (known: {', '.join(codes)}, or a prefix of them, or ALL)")
    return sel


def check_selectors(value: Any) -> tuple[str, ...]:
    """A list of rule codes or prefixes (``FAB``, ``FAB00``, ``FAB001``, ``ALL``)."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ConfigError(f"expected a list of rule codes or prefixes, got {value!r}")
    codes = rule_codes()
    return tuple(_selector(item, codes) for item in value)


def _severity_name(value: Any) -> str:
    if not isinstance(value, str) or value.lower() not in SEVERITIES:
        raise ConfigError(f"expected one of {', '.join(SEVERITIES)}, got {value!r}")
    return value.lower()


def _severity_table(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"expected a table of rule code = severity, got {value!r}")
    codes = rule_codes()
    out: dict[str, str] = {}
    for code, sev in value.items():
        try:
            out[_selector(code, codes)] = _severity_name(sev)
        except ConfigError as exc:
            raise ConfigError(f"for {code!r}: {exc}") from None
    return tuple(sorted(out.items()))


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"expected true or false, got {value!r}")
    return value


def _exclude_patterns(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"expected a list of glob patterns, got {value!r}")
    try:
        _ = _spec(tuple(value)).spec  # every pattern compiled: an invalid one is told now
    except Exception as exc:
        raise ConfigError(f"invalid pattern in {value!r}: {exc}") from None
    return tuple(value)


def _per_file_ignores(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"expected a table of glob pattern = [rule codes or prefixes], got {value!r}")
    out = []
    for pattern, selectors in value.items():
        if not isinstance(pattern, str) or not pattern.lstrip("!"):
            raise ConfigError(f"expected a glob pattern, got {pattern!r}")
        try:
            glob_regex(pattern.lstrip("!"))
        except re.error as exc:
            raise ConfigError(f"invalid glob {pattern!r}: {exc}") from None
        try:
            out.append((pattern, check_selectors(selectors)))
        except ConfigError as exc:
            raise ConfigError(f"for {pattern!r}: {exc}") from None
    return tuple(out)


def _version(value: Any) -> str:
    if not isinstance(value, str) or not _VERSION.match(value.strip()):
        raise ConfigError(f'expected a version string such as "2.6" or "2.6.6", got {value!r}')
    return value.strip()


def _path(value: Any) -> str | None:
    if not isinstance(value, str):
        raise ConfigError(f"expected a path, got {value!r}")
    return value or None


def _debounce(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DEBOUNCE_MS:
        raise ConfigError(f"expected milliseconds from 0 to {MAX_DEBOUNCE_MS}, got {value!r}")
    return value


def key(default: Any, check: Callable[[Any], Any], *, file: bool = True, editor: bool = True) -> Any:
    """A setting: its default, its validator, and where it may be set (``[tool.fabric-lsp]``,
    the editor's settings)."""
    return field(default=default, metadata={"check": check, "file": file, "editor": editor})


# -- globs of per-file-ignores, as ruff matches them (globset: `*` and `?` also match `/`) --------


def _glob_class(pattern: str, i: int) -> tuple[str, int]:
    end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
    if end < 0:
        return re.escape("["), i + 1
    body = pattern[i + 1 : end]
    if body[:1] in ("!", "^"):
        body = "^" + body[1:]
    return "[" + body.replace("\\", "\\\\") + "]", end + 1


def _glob_alternatives(pattern: str, i: int) -> tuple[str, int]:
    end = pattern.find("}", i)
    if end < 0:
        return re.escape("{"), i + 1
    options = pattern[i + 1 : end].split(",")
    return "(?:" + "|".join(_glob_body(o) for o in options) + ")", end + 1


def _glob_body(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            piece, i = "(?:.*/)?", i + 3  # any number of folders, none included
        elif c == "*":
            piece, i = ".*", i + 1
        elif c == "?":
            piece, i = ".", i + 1
        elif c == "[":
            piece, i = _glob_class(pattern, i)
        elif c == "{":
            piece, i = _glob_alternatives(pattern, i)
        else:
            piece, i = re.escape(c), i + 1
        out.append(piece)
    return "".join(out)


@lru_cache(maxsize=1024)
def glob_regex(pattern: str) -> re.Pattern:
    """A compiled glob with the semantics of ruff's ``per-file-ignores`` (globset's defaults):
    ``*`` and ``?`` match ``/`` too, ``**/`` matches any number of folders, ``[...]`` and
    ``{a,b}`` as usual."""
    return re.compile(_glob_body(pattern) + r"\Z", re.DOTALL)


def _matches(pattern: str, path: str, root: str) -> bool:
    """Whether a per-file-ignores pattern (relative to ``root``) matches ``path``: its file name,
    or its path (ruff matches the pattern joined to the project root against the absolute path)."""
    regex = glob_regex(pattern)
    if regex.match(os.path.basename(path)):
        return True
    if os.path.isabs(pattern):
        return bool(regex.match(path.replace(os.sep, "/")))
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    return bool(glob_regex(posixpath.normpath(pattern)).match(rel))


# -- rule selection, as ruff resolves it ----------------------------------------------------------


@dataclass(frozen=True)
class RuleSelection:
    """The selectors of one layer. ``select=None``: the layer did not set it."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @classmethod
    def of(cls, layer: Layer) -> RuleSelection | None:
        if not any(k in layer for k in ("select", "extend-select", "ignore")):
            return None
        return cls(layer.get("select"), layer.get("extend-select", ()), layer.get("ignore", ()))


def _specificity(selectors: Iterable[str], code: str) -> int:
    """How specifically ``selectors`` name ``code``: -1 not at all, 0 ALL, else the prefix length."""
    best = -1
    for s in selectors:
        if s == ALL:
            best = max(best, 0)
        elif code.startswith(s):
            best = max(best, len(s))
    return best


def resolve_rules(codes: Iterable[str], selections: Sequence[RuleSelection]) -> frozenset[str]:
    """The enabled codes after applying each layer's selection in order (ruff's algorithm:
    within a layer the most specific selector wins and ``ignore`` wins a tie; a layer with
    ``select`` replaces the set, one without updates it; an empty ``select`` with only ``ignore``
    carries that ignore to the next layer)."""
    codes = list(codes)
    enabled: set[str] = set()
    carried: tuple[str, ...] = ()
    for sel in selections:
        selects = (sel.select or ()) + sel.extend_select
        ignores, carried = sel.ignore + carried, ()
        updates = {}
        for code in codes:
            on, off = _specificity(selects, code), _specificity(ignores, code)
            if on >= 0 or off >= 0:
                updates[code] = on > off
        if sel.select is not None:
            enabled = {c for c, on in updates.items() if on}
            if not sel.select and not sel.extend_select and sel.ignore:
                carried = sel.ignore
        else:
            enabled |= {c for c, on in updates.items() if on}
            enabled -= {c for c, on in updates.items() if not on}
    return frozenset(enabled)


# -- the schema -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """The effective settings of one file (or, in the server, of the session).

    The fields made with :func:`key` are the schema: every setting, its default and its
    validator. The others record where the settings came from.
    """

    select: tuple[str, ...] = key((ALL,), check_selectors)
    extend_select: tuple[str, ...] = key((), check_selectors)
    ignore: tuple[str, ...] = key((), check_selectors)
    #: The file's only: its globs are relative to the pyproject.toml's folder.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = key((), _per_file_ignores, editor=False)
    severity: tuple[tuple[str, str], ...] = key((), _severity_table)
    report_unknown: bool = key(False, _bool)
    exclude: tuple[str, ...] = key(DEFAULT_EXCLUDE, _exclude_patterns)
    extend_exclude: tuple[str, ...] = key((), _exclude_patterns)
    #: Overrides the version of Lightning installed in the analysed environment (and the one the
    #: project declares); read it through :attr:`effective_lightning_version`, the one place that
    #: decides the version.
    lightning_version: str | None = key(None, _version)
    #: Where ``fabric-lsp check`` keeps its cache (relative to the pyproject.toml's folder); the
    #: default is ``.fabric_lsp_cache`` in the project's root.
    cache_dir: str | None = key(None, _path, editor=False)
    # The editor's only (the command line has flags for what it needs):
    environment_path: str | None = key(None, _path, file=False)
    debounce_ms: int = key(150, _debounce, file=False)
    #: an inlay hint after every ``Fabric(...)``: its configuration, or how many it can have
    inlay_hints: bool = key(True, _bool, file=False)
    certain_severity: str = key(Severity.ERROR.value, _severity_name, file=False)
    possible_severity: str = key(Severity.WARNING.value, _severity_name, file=False)

    #: The pyproject.toml the file's settings came from; None for none.
    source: str | None = None
    #: Every layer's rule selection, defaults first (see :func:`resolve_rules`).
    selections: tuple[RuleSelection, ...] = (RuleSelection(select=(ALL,)),)
    #: Codes that ``per-file-ignores`` turns off for the file this configuration was made for.
    file_ignores: frozenset[str] = frozenset()
    #: The checked folder (the command line's root, the editor's workspace): where the project's
    #: requirements are read when no pyproject.toml of ours gives the root.
    project_root: str | None = None
    #: For the file this configuration was made for (:meth:`for_file`): the folder under the root,
    #: nearest the file, whose requirement files name Lightning (a sub-project's); None for none.
    declared_folder: str | None = None
    #: For a notebook this configuration was made for: the Lightning release its own cells install
    #: (``!pip install pytorch-lightning==1.5.2``), which its later cells run on whatever the
    #: analysed environment has installed; None for none.
    declared_in_file: Declared | None = None

    @classmethod
    def build(cls, layers: Iterable[Layer], source: str | None = None, project_root: str | None = None) -> Config:
        """Defaults, then each validated layer on top (see the module's documentation)."""
        values: dict[str, Any] = {}
        selections = [RuleSelection(select=(ALL,))]
        for layer in layers:
            values.update((k.replace("-", "_"), v) for k, v in layer.items())
            selection = RuleSelection.of(layer)
            if selection is not None:
                selections.append(selection)
        return cls(source=source, selections=tuple(selections), project_root=project_root, **values)

    @property
    def root(self) -> str | None:
        """The folder exclude and per-file-ignores patterns are relative to."""
        return os.path.dirname(self.source) if self.source else None

    @cached_property
    def fingerprint(self) -> str:
        """Every setting of this configuration, as text (a cache entry's key holds it): its
        ``repr``, made once (most files of a project share their folder's configuration)."""
        return repr(self)

    # -- rules -------------------------------------------------------------------------------
    @cached_property
    def enabled_codes(self) -> frozenset[str]:
        return resolve_rules(rule_codes(), self.selections) - self.file_ignores

    def is_enabled(self, code: str) -> bool:
        return code in self.enabled_codes

    def enabled_rules(self) -> list:
        from fabric_lsp.rules import ALL_RULES

        return [r for r in ALL_RULES if self.is_enabled(r.code)]

    def for_file(self, path: str | None) -> Config:
        """This configuration for ``path``: ``per-file-ignores`` applied, the sub-project folder
        whose requirements declare its Lightning version (see :attr:`declared_folder`), and for a
        notebook the release its own cells install (:attr:`declared_in_file`)."""
        if not path:
            return self
        path = os.path.abspath(path)
        out = self
        ignored = self._ignored_for(path)
        if ignored:
            out = replace(out, file_ignores=frozenset(ignored))
        if self.lightning_version:
            return out
        folder = declaring_folder(os.path.dirname(path), self.requirements_root)
        own = notebook_declared(path) if path.endswith(".ipynb") else None
        return replace(out, declared_folder=folder, declared_in_file=own) if folder or own else out

    def _ignored_for(self, path: str) -> set[str]:
        ignored: set[str] = set()
        root = self.root or os.getcwd()
        for pattern, selectors in self.per_file_ignores:
            negated = pattern.startswith("!")
            if _matches(pattern.lstrip("!"), path, root) != negated:
                ignored |= {c for c in rule_codes() if _specificity(selectors, c) >= 0}
        return ignored

    def severity_override(self, code: str) -> Severity | None:
        """The configured severity for ``code`` (the most specific entry), or None."""
        found, length = None, -1
        for sel, sev in self.severity:
            n = _specificity((sel,), code)
            if n > length:
                found, length = sev, n
        return Severity(found) if found else None

    def severity_of(self, finding: Finding) -> Severity:
        """A finding's severity: the one place it is decided, for the command line and the
        server alike. A per-rule ``severity`` override replaces the certain and the possible
        severity (an unknown stays a hint: see :func:`resolve_severity`). Otherwise the rule's own
        severity stands, except that the editor's ``certain-severity`` / ``possible-severity``
        replace the default severity of a certain / possible failure (error / warning); a rule's
        own milder one, such as FAB005's warning where Lightning only warns, is kept."""
        override = self.severity_override(finding.code)
        if override is not None:
            return resolve_severity(finding.certainty, override=override)
        if finding.severity is not resolve_severity(finding.certainty):
            return finding.severity
        certain, possible = Severity(self.certain_severity), Severity(self.possible_severity)
        return resolve_severity(finding.certainty, certain=certain, possible=possible)

    def apply(self, findings: Iterable[Finding]) -> list[Finding]:
        """Drop findings of disabled rules; give the others their severity (:meth:`severity_of`)."""
        out = []
        for f in findings:
            if not self.is_enabled(f.code):
                continue
            severity = self.severity_of(f)
            out.append(f if severity is f.severity else replace(f, severity=severity))
        return out

    @property
    def effective_lightning_version(self) -> str:
        """The Lightning version whose facts apply: the ``lightning-version`` setting, else the
        release a notebook installs in its own cells, else the version installed in the analysed
        environment, else the version the project's requirements declare, else the newest the
        rules know."""
        return self.lightning_version_and_source[0]

    @property
    def lightning_version_and_source(self) -> tuple[str, str]:
        """:attr:`effective_lightning_version` and where it comes from (``--show-settings``)."""
        if self.lightning_version:
            return self.lightning_version, "setting"
        if self.declared_in_file is not None:  # a notebook's own install cell runs before its other cells
            return self.declared_in_file.version, f"declared ({self.declared_in_file.where})"
        installed = installed_lightning_version(self.environment_path)
        if installed:
            return installed, f"installed ({self.environment_path or sys.prefix})"
        declared = declared_lightning_version(self.declared_folder or self.requirements_root)
        if declared is not None:
            folder = os.path.relpath(self.declared_folder, self.requirements_root) if self.declared_folder else ""
            return declared.version, f"declared ({os.path.join(folder, declared.where) if folder else declared.where})"
        return LATEST_LIGHTNING, "default"

    @property
    def requirements_root(self) -> str:
        """Where the project's requirements are read: the pyproject.toml's folder, else the
        checked folder, else the current one."""
        return self.root or self.project_root or os.getcwd()

    # -- files -------------------------------------------------------------------------------
    @property
    def exclude_patterns(self) -> tuple[str, ...]:
        return tuple(self.exclude) + tuple(self.extend_exclude)

    def is_excluded(self, path: str, is_dir: bool = False, root: str | None = None) -> bool:
        """Whether ``path`` matches ``exclude``/``extend-exclude``. Patterns are relative to
        ``root`` if given, else to the configuration's folder (the current folder for the
        defaults). A path outside that folder is matched on its name alone."""
        path, root = os.path.abspath(path), os.path.abspath(root or self.root or os.getcwd())
        if path == root:
            return False
        top = root.rstrip(os.sep) + os.sep
        rel = path[len(top) :] if path.startswith(top) else os.path.basename(path)
        rel = rel.replace(os.sep, "/")
        return bool(_spec(self.exclude_patterns).check(rel + ("/" if is_dir else "")))

    def describe(self) -> dict:
        """The file keys' effective values (``--show-settings``)."""
        out: dict[str, Any] = {"source": self.source}
        for f in fields(self):
            if f.metadata.get("file"):
                value = getattr(self, f.name)
                out[f.name.replace("_", "-")] = dict(value) if f.name in _TABLES else _plain(value)
            if f.name == "lightning_version":
                out["lightning-version"], out["lightning-version-source"] = self.lightning_version_and_source
        out["enabled-rules"] = sorted(self.enabled_codes)
        return out


_TABLES = ("severity", "per_file_ignores")


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


#: kebab-case name → the schema's field.
KEYS = {f.name.replace("_", "-"): f for f in fields(Config) if "check" in f.metadata}
FILE_KEYS = tuple(k for k, f in KEYS.items() if f.metadata["file"])


def camel_case(name: str) -> str:
    head, *rest = name.split("-")
    return head + "".join(w.capitalize() for w in rest)


#: The editor's spellings (camelCase, and the file's kebab-case) → kebab-case name.
EDITOR_KEYS = {spelling: k for k, f in KEYS.items() if f.metadata["editor"] for spelling in (k, camel_case(k))}


@lru_cache(maxsize=64)
def _spec(patterns: tuple[str, ...]) -> _IgnoreFile:
    return _IgnoreFile(list(patterns))


# -- reading layers -------------------------------------------------------------------------------


def validate(name: str, value: Any) -> Any:
    """The normalised value of the setting ``name`` (kebab-case); raises :class:`ConfigError`."""
    spec = KEYS.get(name)
    if spec is None:
        raise ConfigError(f"unknown key (known: {', '.join(FILE_KEYS)})")
    return spec.metadata["check"](value)


def parse_table(table: Any, where: str) -> tuple[dict[str, Any], list[str]]:
    """The validated layer of a ``[tool.fabric-lsp]`` table, and one problem per bad key."""
    if not isinstance(table, Mapping):
        return {}, [f"{where}: [tool.{TABLE}] must be a table; using the defaults"]
    values: dict[str, Any] = {}
    problems: list[str] = []
    for name, value in table.items():
        norm = str(name).replace("_", "-")
        if norm not in FILE_KEYS:
            problems.append(f"{where}: unknown key `{name}` in [tool.{TABLE}] (known: {', '.join(FILE_KEYS)}); ignored")
            continue
        try:
            values[norm] = validate(norm, value)
        except ConfigError as exc:
            problems.append(f"{where}: invalid value for `{name}` in [tool.{TABLE}]: {exc}; using the default")
    return values, problems


def client_layers(environment: str | None, settings: Layer) -> list[Layer]:
    """The editor's layers over the project's files: the interpreter the workspace analyses
    (``environment``, where it is not this one), then the editor's validated ``settings``."""
    return [{"environment-path": environment} if environment else {}, settings]


def client_layer(raw: Any, where: str = "settings") -> tuple[dict[str, Any], list[str]]:
    """The validated layer of an editor's settings (``{"fabric-lsp": {...}}`` or the object
    itself). Keys that are not ours are passed over (editors send their own); ``null`` unsets."""
    if raw is None:
        return {}, []
    if isinstance(raw, Mapping) and isinstance(raw.get(SECTION), Mapping):
        raw = raw[SECTION]
    if not isinstance(raw, Mapping):
        return {}, [f"fabric-lsp: {where} must be an object, got {type(raw).__name__}; using the defaults"]
    values: dict[str, Any] = {}
    problems: list[str] = []
    for name, value in raw.items():
        norm = EDITOR_KEYS.get(name)
        if norm is None or value is None:
            continue
        try:
            values[norm] = validate(norm, value)
        except ConfigError as exc:
            problems.append(f"fabric-lsp: invalid value for setting `{name}` ({where}): {exc}; using the default")
    return values, problems


def _read_toml(path: str) -> tuple[dict | None, list[str], bool]:
    """(data, problems, configures_us) of one pyproject.toml."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh), [], True
    except OSError as exc:
        return None, [f"{path}: cannot read: {exc.strerror or exc}; using the defaults"], True
    except tomllib.TOMLDecodeError as exc:
        # Without parsing it, we cannot know whether it configures fabric-lsp: if it mentions
        # the table, it does (with defaults); otherwise keep looking further up.
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                mentions = f"[tool.{TABLE}" in fh.read()
        except OSError:
            mentions = False
        return None, [f"{path}: invalid TOML ({exc}); using the defaults"] if mentions else [], mentions


def load_layer(path: str) -> tuple[dict[str, Any] | None, list[str]]:
    """(layer, problems) of one ``pyproject.toml``; the layer is None when it has no table."""
    data, problems, ours = _read_toml(path)
    if data is None:
        return ({} if ours else None), problems
    tool = data.get("tool")
    if not isinstance(tool, Mapping) or TABLE not in tool:
        return None, []
    return parse_table(tool[TABLE], path)


class Resolver:
    """Finds each folder's configuration: the closest pyproject.toml with a ``[tool.fabric-lsp]``
    table, with the client layers (command line, or editor settings) on top. A pyproject.toml is
    re-read when its modification time or size changes, so a long-lived server sees edits without
    restarting. Problems found while loading are queued once per (file, content) for
    :meth:`drain_problems`.
    """

    def __init__(
        self, overrides: Sequence[Layer] = (), stop_at: str | None = None, project_root: str | None = None
    ) -> None:
        self.stop_at = os.path.abspath(stop_at) if stop_at else None
        #: the checked folder, given to every configuration (:attr:`Config.project_root`)
        self.project_root = os.path.abspath(project_root) if project_root else None
        # path -> (stamp, the file's layer or None without our table, its Config)
        self._files: dict[str, tuple[tuple[int, int], dict[str, Any] | None, Config | None]] = {}
        self._pending: list[str] = []
        self._lock = threading.Lock()
        self.overrides: tuple[Layer, ...] = ()
        self.default = Config()
        self.set_overrides(overrides)

    def _build(self, path: str, layer: dict[str, Any] | None) -> Config | None:
        return (
            None
            if layer is None
            else Config.build([layer, *self.overrides], source=path, project_root=self.project_root)
        )

    def set_overrides(self, overrides: Sequence[Layer]) -> None:
        """New client layers: every configuration is rebuilt; the files are not re-read (and
        their problems not reported again)."""
        with self._lock:
            self.overrides = tuple(overrides)
            self.default = Config.build(self.overrides, project_root=self.project_root)
            self._files = {p: (stamp, layer, self._build(p, layer)) for p, (stamp, layer, _) in self._files.items()}

    def _load_file(self, path: str) -> Config | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            cached = self._files.get(path)
            if cached is not None and cached[0] == stamp:
                return cached[2]
        layer, problems = load_layer(path)
        config = self._build(path, layer)
        with self._lock:
            self._files[path] = (stamp, layer, config)
            self._pending.extend(problems)
        return config

    def for_path(self, path: str | None) -> Config:
        """The configuration of a file (or folder): the closest pyproject.toml with our table."""
        if not path:
            path = os.path.join(os.getcwd(), "-")
        directory = os.path.abspath(path)
        if not os.path.isdir(directory):
            directory = os.path.dirname(directory)
        while True:
            candidate = os.path.join(directory, PYPROJECT)
            if os.path.isfile(candidate):
                config = self._load_file(candidate)
                if config is not None:
                    return config
            parent = os.path.dirname(directory)
            if parent == directory or (self.stop_at and directory == self.stop_at):
                return self.default
            directory = parent

    def for_file(self, path: str | None) -> Config:
        """:meth:`for_path` with ``per-file-ignores`` applied for this file."""
        return self.for_path(path).for_file(path)

    def config_folders(self) -> list[str]:
        """The folders of the configuration files read so far."""
        with self._lock:
            return sorted({os.path.dirname(path) for path in self._files})

    def drain_problems(self) -> list[str]:
        with self._lock:
            out, self._pending = self._pending, []
        return out


#: a named group of a pattern's regular expression (pathspec marks a directory match with one)
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


class _IgnoreFile:
    """One ignore file's patterns, and one regular expression that a path matches (``search``, as
    each pattern is tried) where any of them does: most paths match none, and are told so by one
    match. The patterns themselves (a ``pathspec.GitIgnoreSpec``, whose ``check_file`` tries them
    one by one) are compiled only for a path that one of them may decide."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = tuple(lines)
        self._spec: Any = None
        self.any_pattern: re.Pattern[str] | None = None  # None: ask each pattern
        self.any_negation: re.Pattern[str] | None = None  # where a `!` pattern matches
        texts, negations = _translated(self.lines)
        try:
            self.any_pattern, self.any_negation = _any_of(texts), _any_of(negations)
        except re.error:
            _ = self.spec  # compiled one by one now: pathspec raises, or each pattern is asked

    @property
    def spec(self) -> Any:
        if self._spec is None:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(self.lines)
        return self._spec

    def check(self, rel: str) -> bool | None:
        """Whether the patterns ignore ``rel`` (a ``/``-separated relative path, ending in ``/`` for
        a folder): True or False as the last pattern that matches it decides, None where none does."""
        if self.any_pattern is not None:
            if not self.any_pattern.search(rel):
                return None
            if self.any_negation is not None and not self.any_negation.search(
                rel
            ):  # every pattern that matches ignores it
                return True
        key = (self.lines, rel)
        if key not in _DECIDED:  # pathspec's decision, made once (the cache keeps it for later runs)
            _DECIDED[key] = self.spec.check_file(rel).include
        return _DECIDED[key]


def _any_of(texts: tuple[str, ...]) -> re.Pattern[str]:
    """One expression that a path matches (``search``) where one of pathspec's ``texts`` does."""
    return re.compile("|".join(f"(?:{_NAMED_GROUP.sub('(?:', x)})" for x in texts) or r"(?!)")


#: pathspec's translations of ignore files' lines, by lines (see :func:`_translated`)
_TRANSLATED: dict[tuple[str, ...], tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _translated(lines: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """pathspec's own translation of each line that decides something to an expression (it raises
    where pathspec would), and those of the ``!`` negations among them; made once
    (:func:`remembered_translations` keeps them for a later process)."""
    if lines not in _TRANSLATED:
        from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

        translated = [
            (regex, include)
            for regex, include in map(GitIgnoreSpecPattern.pattern_to_regex, lines)
            if include is not None
        ]
        _TRANSLATED[lines] = (
            tuple(regex for regex, _ in translated),
            tuple(regex for regex, include in translated if not include),
        )
    return _TRANSLATED[lines]


#: pathspec's decisions on the paths a ``!`` pattern may decide, by the ignore file's lines and the
#: path: deciding one compiles every pattern of the file, which a later run then need not do
_DECIDED: dict[tuple[tuple[str, ...], str], bool | None] = {}


def remembered_translations() -> dict:
    """The translations made so far, and pathspec's decisions (kept by the cache, whose key holds
    pathspec's version)."""
    return {"translations": dict(_TRANSLATED), "decisions": dict(_DECIDED)}


def recall_translations(kept: object) -> None:
    """Take a former process's :func:`remembered_translations`."""
    if not isinstance(kept, dict):
        return
    translations, decisions = kept.get("translations"), kept.get("decisions")
    for lines, translated in translations.items() if isinstance(translations, dict) else ():
        if (
            isinstance(lines, tuple)
            and isinstance(translated, tuple)
            and len(translated) == 2
            and isinstance(translated[1], tuple)
        ):
            _TRANSLATED.setdefault(lines, translated)
    for key, decided in decisions.items() if isinstance(decisions, dict) else ():
        if (
            isinstance(key, tuple)
            and len(key) == 2
            and isinstance(key[0], tuple)
            and isinstance(key[1], str)
            and decided in (True, False, None)
        ):
            _DECIDED.setdefault(key, decided)


class GitIgnore:
    """``.gitignore`` files (and ``.git/info/exclude``) from the repository root down to a path,
    the deepest decisive pattern winning, as git does. Outside a git repository, only the
    ``.gitignore`` files at or below ``base`` count."""

    def __init__(self, base: str | None = None) -> None:
        self.base = os.path.abspath(base) if base else None
        self._specs: dict[str, Any] = {}
        self._roots: dict[str, str | None] = {}
        self._chains: dict[str, list[tuple[str, Any]]] = {}

    def _load(self, directory: str, name: str = ".gitignore"):
        key = os.path.join(directory, name)
        if key not in self._specs:
            spec = None
            try:
                with open(key, encoding="utf-8", errors="replace") as fh:
                    lines = fh.read().splitlines()
                spec = _IgnoreFile(lines)
            except OSError:
                spec = None
            except Exception:  # a pattern pathspec cannot compile: ignore that file, as git would warn
                spec = None
            self._specs[key] = spec
        return self._specs[key]

    def git_root(self, directory: str) -> str | None:
        """The repository holding ``directory``: the nearest folder up from it with a ``.git``
        (each folder asked once: a folder's answer is its parent's unless it has one)."""
        if directory not in self._roots:
            parent = os.path.dirname(directory)
            if os.path.exists(os.path.join(directory, ".git")):
                self._roots[directory] = directory
            else:
                self._roots[directory] = None if parent == directory else self.git_root(parent)
        return self._roots[directory]

    def ignored(self, path: str, is_dir: bool = False) -> bool:
        path = os.path.abspath(path)
        sources = self._sources(os.path.dirname(path))
        for d, spec in sources:  # deepest first: its decision wins
            if spec is None:
                continue
            rel = path[len(d.rstrip(os.sep)) + 1 :].replace(os.sep, "/") + ("/" if is_dir else "")  # d holds path
            include = spec.check(rel)
            if include is not None:
                return bool(include)
        return False

    def _sources(self, directory: str) -> list[tuple[str, Any]]:
        """The ignore files that decide for the entries of ``directory``, deepest first (each
        with its folder): those from the repository root (else ``base``) down to it."""
        if directory not in self._chains:
            self._chains[directory] = self._chain(directory)
        return self._chains[directory]

    def _chain(self, directory: str) -> list[tuple[str, Any]]:
        top = self.git_root(directory)
        if top is None:
            top = self.base
            if top is None or not (directory == top or directory.startswith(top.rstrip(os.sep) + os.sep)):
                return []
        chain = []
        d = directory
        while True:
            chain.append(d)
            if d == top:
                break
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        sources = [(d, self._load(d)) for d in chain]
        if self.git_root(directory) == top:
            sources.append((top, self._load(os.path.join(top, ".git", "info"), "exclude")))
        return sources


__all__ = [
    "client_layers",
    "Config",
    "ConfigError",
    "DEFAULT_EXCLUDE",
    "GitIgnore",
    "KEYS",
    "LATEST_LIGHTNING",
    "Resolver",
    "RuleSelection",
    "client_layer",
    "glob_regex",
    "installed_lightning_version",
    "load_layer",
    "parse_table",
    "resolve_rules",
    "validate",
]
