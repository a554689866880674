"""Plain data the engine produces. Positions are 0-based lines and 0-based columns counted in
code points (Python ``str`` indices); the server converts them to the negotiated encoding."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"


class Certainty(enum.Enum):
    """How sure a finding is: every path fails (certain), a path the code visibly can choose fails
    (possible), or the analysis cannot tell (unknown: reported as a hint, on request)."""

    CERTAIN = "certain"
    POSSIBLE = "possible"
    UNKNOWN = "unknown"


def resolve_severity(
    certainty: Certainty,
    *,
    certain: Severity = Severity.ERROR,
    possible: Severity = Severity.WARNING,
    override: Severity | None = None,
) -> Severity:
    """The one mapping from certainty (and the configured severities) to a severity, for the CLI
    and the server alike. A per-rule ``override`` replaces the certain and the possible
    severity; an unknown stays a hint whatever is configured."""
    if certainty is Certainty.UNKNOWN:
        return Severity.HINT
    if override is not None:
        return override
    return certain if certainty is Certainty.CERTAIN else possible


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
    def of(cls, l1: int, c1: int, l2: int, c2: int) -> Span:
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
    path: str | None = None


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    message: str
    span: Span
    related: tuple[Related, ...] = ()
    fix: Fix | None = None
    url: str = ""
    certainty: Certainty = Certainty.CERTAIN
    #: the Lightning ``file:line`` that decides the finding, where the rule names one in its hover
    lightning: str = field(default="", compare=False, hash=False)
    #: in a notebook's report: the cell of the finding and of each related location (None: another
    #: file), 0-based (:meth:`fabric_lsp.documents.notebook.Program.to_cells`)
    cell: int | None = field(default=None, compare=False, hash=False)
    related_cells: tuple[int | None, ...] = field(default=(), compare=False, hash=False)


@dataclass(frozen=True)
class Located:
    """A line of an explanation that points at a place (rendered ``file:line``)."""

    text: str
    span: Span | None = None
    path: str | None = None  # None: the analysed document


@dataclass(frozen=True)
class Explanation:
    """What hover says at a site: a headline, facts with their places, and the steps inference
    took. Plain data with spans, so that a reused verdict moves with its statement."""

    headline: str
    items: tuple[Located, ...] = ()
    steps: tuple[Located, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """A rule's answer at one site, computed once per document version and shared by
    diagnostics, code actions and hover."""

    code: str
    span: Span
    finding: Finding | None = None
    explanation: Explanation | None = None
