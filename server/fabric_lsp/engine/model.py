"""Plain data the engine produces. Positions are 0-based lines and 0-based columns counted in
code points (Python ``str`` indices); the server converts them to the negotiated encoding."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"


class Applicability(enum.Enum):
    SAFE = "safe"  # keeps behaviour: applied by fix-all and --fix
    UNSAFE = "unsafe"  # offered, but only applied on request


@dataclass(frozen=True, order=True)
class Pos:
    line: int
    col: int


@dataclass(frozen=True)
class Span:
    start: Pos
    end: Pos

    @classmethod
    def of(cls, l1: int, c1: int, l2: int, c2: int) -> "Span":
        return cls(Pos(l1, c1), Pos(l2, c2))


@dataclass(frozen=True)
class Edit:
    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    title: str
    applicability: Applicability
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Related:
    """A location that explains a finding. ``path`` is None for the analysed document itself."""

    message: str
    span: Span
    path: Optional[str] = None


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    message: str
    span: Span
    related: tuple[Related, ...] = ()
    fix: Optional[Fix] = None
    url: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)
