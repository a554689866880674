"""Server options from ``initializationOptions`` and ``workspace/didChangeConfiguration``.

Keys are camelCase. An invalid value is reported (one message naming the key) and its default
applies; the server keeps running.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

from fabric_lsp.engine.model import Severity

_SEVERITIES = {s.value for s in Severity}


@dataclass(frozen=True)
class Options:
    environment_path: Optional[str] = None
    debounce_ms: int = 150
    report_unknown: bool = False
    certain_severity: str = "error"
    possible_severity: str = "warning"
    #: The [tool.fabric-lsp] keys the editor set (select, ignore, severity, report-unknown,
    #: exclude, extend-exclude, lightning-version), validated; they override pyproject.toml.
    config_overrides: dict = field(default_factory=dict, hash=False)

    _keys = {
        "environmentPath": "environment_path",
        "debounceMs": "debounce_ms",
        "reportUnknown": "report_unknown",
        "certainSeverity": "certain_severity",
        "possibleSeverity": "possible_severity",
    }

    def merged(self, raw: Any) -> tuple["Options", list[str]]:
        """A copy updated from a client's dict; returns (options, problems)."""
        if raw is None:
            return self, []
        if not isinstance(raw, dict):
            return self, [f"fabric-lsp settings must be an object, got {type(raw).__name__}; using defaults"]
        if isinstance(raw.get("fabric-lsp"), dict):
            raw = raw["fabric-lsp"]
        problems: list[str] = []
        changes: dict[str, Any] = {}
        for key, value in raw.items():
            attr = self._keys.get(key)
            if attr is None:
                continue
            ok = True
            if attr == "environment_path":
                ok = value is None or (isinstance(value, str))
                value = value or None
            elif attr == "debounce_ms":
                ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10_000
            elif attr == "report_unknown":
                ok = isinstance(value, bool)
            else:
                ok = isinstance(value, str) and value.lower() in _SEVERITIES
                value = value.lower() if ok else value
            if ok:
                changes[attr] = value
            else:
                problems.append(f"fabric-lsp: invalid value {value!r} for setting `{key}`; using the default")
        from fabric_lsp.config import editor_overrides

        overrides, more = editor_overrides({k: v for k, v in raw.items() if k != "reportUnknown"})
        if "report_unknown" in changes:
            overrides["report-unknown"] = changes["report_unknown"]
        problems.extend(more)
        if overrides:
            changes["config_overrides"] = {**self.config_overrides, **overrides}
        return replace(self, **changes), problems


__all__ = ["Options"]
