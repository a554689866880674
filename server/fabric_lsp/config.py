"""Project configuration: the ``[tool.fabric-lsp]`` table of ``pyproject.toml``.

A file is configured by the closest ``pyproject.toml`` above it that has a ``[tool.fabric-lsp]``
table (a ``pyproject.toml`` without the table is passed over, as ruff does). Keys::

    [tool.fabric-lsp]
    select = ["FAB"]                 # rule codes or prefixes ("ALL" for every rule)
    ignore = ["FAB001"]              # the more specific of select/ignore wins
    severity = { FAB001 = "warning" }  # error | warning | information | hint
    report-unknown = false           # hint where the strategy cannot be determined
    exclude = ["build/"]             # gitignore-style patterns, relative to this file's folder
    extend-exclude = ["legacy/"]     # added to `exclude` (or to the default excludes)
    lightning-version = "2.6"        # for version-dependent rules

An invalid value produces one message naming the key and the file; that key's default applies
and everything else still works. The editor sends the same settings (camelCase:
``reportUnknown``, ``extendExclude``, ``lightningVersion``) through ``initializationOptions`` /
``workspace/didChangeConfiguration``; they override the file's, key by key.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Optional

from fabric_lsp.engine.model import Finding, Severity
from fabric_lsp.facts import LATEST_LIGHTNING, installed_lightning_version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10
    import tomli as tomllib

PYPROJECT = "pyproject.toml"
TABLE = "fabric-lsp"
#: Folders never worth walking into (the default ``exclude``, after ruff's); gitignore-style patterns.
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr/",
    ".direnv/",
    ".eggs/",
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

#: File key → attribute; the editor's camelCase spellings map to the same keys.
KEYS = {
    "select": "select",
    "ignore": "ignore",
    "severity": "severity",
    "report-unknown": "report_unknown",
    "exclude": "exclude",
    "extend-exclude": "extend_exclude",
    "lightning-version": "lightning_version",
}
EDITOR_KEYS = {
    "select": "select",
    "ignore": "ignore",
    "severity": "severity",
    "reportUnknown": "report-unknown",
    "exclude": "exclude",
    "extendExclude": "extend-exclude",
    "lightningVersion": "lightning-version",
}
_VERSION = re.compile(r"^\d+(\.\d+){0,2}((a|b|rc)\d+)?(\.?(post|dev)\d+)?$")


class ConfigError(ValueError):
    pass


def _rule_codes() -> list[str]:
    from fabric_lsp.rules import ALL_RULES

    return [r.code for r in ALL_RULES]


def _selectors(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ConfigError(f"expected a list of rule codes or prefixes, got {value!r}")
    codes = _rule_codes()
    out = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ConfigError(f"expected a list of rule codes or prefixes, got the item {item!r}")
        sel = item.strip().upper()
        if sel != "ALL" and not any(c.startswith(sel) for c in codes):
            raise ConfigError(f"{item!r} matches no rule (known: {', '.join(codes)})")
        out.append(sel)
    return tuple(out)


def validate(key: str, value: Any) -> Any:
    """The normalised value of a file key; raises :class:`ConfigError` with the reason."""
    if key in ("select", "ignore"):
        return _selectors(key, value)
    if key == "severity":
        if not isinstance(value, Mapping):
            raise ConfigError(f"expected a table of rule code = severity, got {value!r}")
        out = {}
        for code, sev in value.items():
            (sel,) = _selectors(key, [code])
            if not isinstance(sev, str) or sev.lower() not in SEVERITIES:
                raise ConfigError(f"severity for {code!r} must be one of {', '.join(SEVERITIES)}, got {sev!r}")
            out[sel] = sev.lower()
        return tuple(sorted(out.items()))
    if key == "report-unknown":
        if not isinstance(value, bool):
            raise ConfigError(f"expected true or false, got {value!r}")
        return value
    if key in ("exclude", "extend-exclude"):
        if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"expected a list of glob patterns, got {value!r}")
        try:
            _spec(value)
        except Exception as exc:
            raise ConfigError(f"invalid pattern in {value!r}: {exc}") from None
        return tuple(value)
    if key == "lightning-version":
        if not isinstance(value, str) or not _VERSION.match(value.strip()):
            raise ConfigError(f"expected a version string such as \"2.6\" or \"2.6.6\", got {value!r}")
        return value.strip()
    raise ConfigError(f"unknown key (known: {', '.join(KEYS)})")


def _spec(patterns: Iterable[str]):
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(list(patterns))


@dataclass(frozen=True)
class Config:
    """The effective configuration of one file."""

    source: Optional[str] = None  # the pyproject.toml it came from; None for the defaults
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, str], ...] = ()
    report_unknown: bool = False
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    lightning_version: Optional[str] = None  # as configured; see effective_lightning_version
    environment_path: Optional[str] = field(default=None, compare=False)

    @property
    def root(self) -> Optional[str]:
        """The folder exclude patterns are relative to."""
        return os.path.dirname(self.source) if self.source else None

    # -- rules -------------------------------------------------------------------------------
    def is_enabled(self, code: str) -> bool:
        def best(selectors: tuple[str, ...]) -> int:
            n = -1
            for s in selectors:
                if s == "ALL":
                    n = max(n, 0)
                elif code.startswith(s):
                    n = max(n, len(s))
            return n

        chosen, dropped = best(self.select), best(self.ignore)
        return chosen >= 0 and chosen > dropped

    def enabled_rules(self) -> list:
        from fabric_lsp.rules import ALL_RULES

        return [r for r in ALL_RULES if self.is_enabled(r.code)]

    def severity_override(self, code: str) -> Optional[Severity]:
        """The configured severity for ``code`` (the most specific entry), or None."""
        found, length = None, -1
        for sel, sev in self.severity:
            if (sel == "ALL" or code.startswith(sel)) and (0 if sel == "ALL" else len(sel)) > length:
                found, length = sev, 0 if sel == "ALL" else len(sel)
        return Severity(found) if found else None

    def apply(self, findings: Iterable[Finding]) -> list[Finding]:
        """Drop findings of disabled rules; apply per-rule severity overrides (they replace both
        the certain and the possible severity; ``extra["severity_override"]`` records it)."""
        out = []
        for f in findings:
            if not self.is_enabled(f.code):
                continue
            sev = self.severity_override(f.code)
            if sev is not None:
                f = replace(f, severity=sev, extra={**f.extra, "severity_override": sev.value})
            out.append(f)
        return out

    @property
    def effective_lightning_version(self) -> str:
        return self.lightning_version or installed_lightning_version(self.environment_path) or LATEST_LIGHTNING

    # -- files -------------------------------------------------------------------------------
    @property
    def exclude_patterns(self) -> tuple[str, ...]:
        return tuple(self.exclude) + tuple(self.extend_exclude)

    def is_excluded(self, path: str, is_dir: bool = False, root: Optional[str] = None) -> bool:
        """Whether ``path`` matches ``exclude``/``extend-exclude``. Patterns are relative to
        ``root`` if given, else to the configuration's folder (the current folder for the
        defaults). A path outside that folder is matched on its name alone."""
        root = root or self.root or os.getcwd()
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
        if rel == ".":
            return False
        if rel.startswith(".." + os.sep) or rel == "..":
            rel = os.path.basename(path.rstrip(os.sep))
        rel = rel.replace(os.sep, "/")
        return _cached_spec(self.exclude_patterns).match_file(rel + ("/" if is_dir else ""))

    # -- editor ------------------------------------------------------------------------------
    def with_overrides(self, overrides: Mapping[str, Any]) -> "Config":
        """A copy with validated file keys (see :func:`validate`) replaced."""
        if not overrides:
            return self
        return replace(self, **{KEYS[k]: v for k, v in overrides.items() if k in KEYS})

    def describe(self) -> dict:
        return {
            "source": self.source,
            "select": list(self.select),
            "ignore": list(self.ignore),
            "severity": dict(self.severity),
            "report-unknown": self.report_unknown,
            "exclude": list(self.exclude),
            "extend-exclude": list(self.extend_exclude),
            "lightning-version": self.effective_lightning_version,
        }


_SPECS: dict[tuple[str, ...], Any] = {}


def _cached_spec(patterns: tuple[str, ...]):
    spec = _SPECS.get(patterns)
    if spec is None:
        spec = _SPECS[patterns] = _spec(patterns)
    return spec


def parse_table(table: Any, where: str) -> tuple[dict[str, Any], list[str]]:
    """Validated ``{file key: value}`` from a ``[tool.fabric-lsp]`` table, and problems."""
    if not isinstance(table, Mapping):
        return {}, [f"{where}: [tool.{TABLE}] must be a table; using the defaults"]
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in table.items():
        norm = key.replace("_", "-")
        if norm not in KEYS:
            problems.append(f"{where}: unknown key `{key}` in [tool.{TABLE}] (known: {', '.join(KEYS)}); ignored")
            continue
        try:
            values[norm] = validate(norm, value)
        except ConfigError as exc:
            problems.append(f"{where}: invalid value for `{key}` in [tool.{TABLE}]: {exc}; using the default")
    return values, problems


def load(path: str, environment_path: Optional[str] = None) -> tuple[Optional[Config], list[str]]:
    """(config, problems) for one ``pyproject.toml``; config is None when it has no table."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        return Config(source=path, environment_path=environment_path), [f"{path}: cannot read: {exc.strerror or exc}; using the defaults"]
    except tomllib.TOMLDecodeError as exc:
        # Without parsing it, we cannot know whether it configures fabric-lsp: if it mentions
        # the table, it does (with defaults); otherwise keep looking further up.
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                mentions = f"[tool.{TABLE}" in fh.read()
        except OSError:
            mentions = False
        if not mentions:
            return None, []
        return Config(source=path, environment_path=environment_path), [f"{path}: invalid TOML ({exc}); using the defaults"]
    tool = data.get("tool")
    if not isinstance(tool, Mapping) or TABLE not in tool:
        return None, []
    values, problems = parse_table(tool[TABLE], path)
    return Config(source=path, environment_path=environment_path).with_overrides(values), problems


class Resolver:
    """Finds and caches each folder's configuration. A ``pyproject.toml`` is re-read when its
    modification time or size changes, so a long-lived server sees edits without restarting.
    Problems found while loading are queued once per (file, content) for :meth:`drain_problems`.
    """

    def __init__(self, environment_path: Optional[str] = None, stop_at: Optional[str] = None) -> None:
        self.environment_path = environment_path
        self.stop_at = os.path.abspath(stop_at) if stop_at else None
        self._files: dict[str, tuple[tuple[int, int], Optional[Config]]] = {}
        self._pending: list[str] = []
        self._lock = threading.Lock()
        self.default = Config(environment_path=environment_path)

    def _load_file(self, path: str) -> Optional[Config]:
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            cached = self._files.get(path)
            if cached is not None and cached[0] == stamp:
                return cached[1]
        config, problems = load(path, self.environment_path)
        with self._lock:
            self._files[path] = (stamp, config)
            self._pending.extend(problems)
        return config

    def for_path(self, path: Optional[str]) -> Config:
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

    def clear(self) -> None:
        with self._lock:
            self._files.clear()

    def drain_problems(self) -> list[str]:
        with self._lock:
            out, self._pending = self._pending, []
        return out


class GitIgnore:
    """``.gitignore`` files (and ``.git/info/exclude``) from the repository root down to a path,
    the deepest decisive pattern winning, as git does. Outside a git repository, only the
    ``.gitignore`` files at or below ``base`` count."""

    def __init__(self, base: Optional[str] = None) -> None:
        self.base = os.path.abspath(base) if base else None
        self._specs: dict[str, Any] = {}
        self._roots: dict[str, Optional[str]] = {}

    def _load(self, directory: str, name: str = ".gitignore"):
        key = os.path.join(directory, name)
        if key not in self._specs:
            spec = None
            try:
                with open(key, encoding="utf-8", errors="replace") as fh:
                    lines = fh.read().splitlines()
                import pathspec

                spec = pathspec.GitIgnoreSpec.from_lines(lines)
            except OSError:
                spec = None
            except Exception:  # a pattern pathspec cannot compile: ignore that file, as git would warn
                spec = None
            self._specs[key] = spec
        return self._specs[key]

    def git_root(self, directory: str) -> Optional[str]:
        if directory in self._roots:
            return self._roots[directory]
        d, found = directory, None
        while True:
            if os.path.exists(os.path.join(d, ".git")):
                found = d
                break
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        self._roots[directory] = found
        return found

    def ignored(self, path: str, is_dir: bool = False) -> bool:
        path = os.path.abspath(path)
        directory = os.path.dirname(path)
        top = self.git_root(directory)
        if top is None:
            top = self.base
            if top is None or not (directory == top or directory.startswith(top.rstrip(os.sep) + os.sep)):
                return False
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
        for d, spec in sources:  # deepest first: its decision wins
            if spec is None:
                continue
            rel = os.path.relpath(path, d).replace(os.sep, "/") + ("/" if is_dir else "")
            include = spec.check_file(rel).include
            if include is not None:
                return bool(include)
        return False


def editor_overrides(raw: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Validated file keys from the editor's settings (camelCase or file spelling)."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in raw.items():
        norm = EDITOR_KEYS.get(key) or (key if key in KEYS else None)
        if norm is None:
            continue
        if value is None:  # an editor's "unset": fall back to the file or the default
            continue
        try:
            values[norm] = validate(norm, value)
        except ConfigError as exc:
            problems.append(f"fabric-lsp: invalid value for setting `{key}`: {exc}; using the default")
    return values, problems


__all__ = [
    "Config",
    "ConfigError",
    "GitIgnore",
    "DEFAULT_EXCLUDE",
    "LATEST_LIGHTNING",
    "Resolver",
    "editor_overrides",
    "installed_lightning_version",
    "load",
    "parse_table",
    "validate",
]
