"""What a rule is: code, documentation, examples that are also its tests, and a check."""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Callable, ClassVar

from fabric_lsp import facts
from fabric_lsp.engine.findings import (
    Certainty,
    Explanation,
    Finding,
    Fix,
    Pos,
    Related,
    Severity,
    Span,
    Verdict,
    resolve_severity,
)

if TYPE_CHECKING:
    from fabric_lsp.engine.semantic.model import SemanticModel

DOCS_URL = "https://github.com/fabric-lsp/fabric-lsp/blob/main/docs/rules/{code}.md"
REQUIRED_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Which strategies")


@dataclass(frozen=True)
class Example:
    title: str
    code: str
    severity: Severity | None = None  # for invalid examples: the expected severity
    fixed: str | None = None  # for invalid examples: the text after applying the fix
    path: str | None = None  # where the example is analysed (e.g. a notebook: "example.ipynb")
    #: other files of the example's workspace (relative path, text), e.g. a batch script that
    #: launches the example; with files, the example is analysed as ``path`` (or ``train.py``)
    #: in a workspace holding them
    files: tuple[tuple[str, str], ...] = ()

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).lstrip("\n")

    @property
    def fixed_source(self) -> str | None:
        return None if self.fixed is None else textwrap.dedent(self.fixed).lstrip("\n")


@dataclass
class RuleContext:
    log: Callable[[str], None] = lambda msg: None
    #: show the hints rules make where a Fabric's configuration cannot be determined statically
    #: (:meth:`Rule.unknown_finding`); the analyzer drops them otherwise
    report_unknown: bool = False
    #: the Lightning version whose behaviour rules apply (``Config.effective_lightning_version``)
    lightning_version: str = facts.LATEST_LIGHTNING

    def settings(self) -> tuple:
        """Every input a verdict may read besides the document (each field but ``log``): part of
        the key under which verdicts are reused (:class:`~fabric_lsp.engine.workspace.incremental.DocumentMemo`)."""
        return tuple(getattr(self, f.name) for f in fields(self) if f.name != "log")


@dataclass(frozen=True)
class Prefilter:
    """A rule's cheap textual test: the analyzer runs the rule on a document only when it matches
    the text, so a file that mentions none of the APIs a rule watches costs that rule nothing.
    The rules' prefilters are declared together in :mod:`fabric_lsp.rules.prefilters`, which
    imports no analysis: the command line tells the files that need one from the others with it.

    ``parts``: the pattern as alternatives, each tried only when the text holds one of its
    substrings (for a pattern whose alternatives have different common words: the search for a
    rare one is not paid on every file that holds a common one); ``pattern`` is their union
    (:meth:`of_parts`), or the same test written as one readable expression where the parts are
    written to start with literal text (``re`` scans a file for a pattern's literal start, and
    tries one that starts otherwise at every position). ``folded``: for a pattern that is a
    case-insensitive alternation of words, those words, looked for in the lower-cased text
    instead (faster than the search)."""

    pattern: re.Pattern[str]
    parts: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = ()
    folded: tuple[str, ...] = ()

    @classmethod
    def of_parts(cls, *parts: tuple[tuple[str, ...], re.Pattern[str]]) -> Prefilter:
        return cls(re.compile("|".join(part.pattern for _, part in parts)), parts=parts)

    def matches(self, text: str, probe: TextProbe | None = None) -> bool:
        """Whether ``text`` passes (``probe``: the text's :class:`TextProbe`, when several
        prefilters ask about it: a substring several of them look for is looked for once)."""
        if self.folded:
            lowered = text.lower()
            return any(word in lowered for word in self.folded)
        holds = probe.holds if probe is not None else text.__contains__
        if self.parts:
            return any(any(map(holds, words)) and part.search(text) for words, part in self.parts)
        return self.pattern.search(text) is not None


class TextProbe:
    """One text asked about by several prefilters: each prefilter (object) answers once — rules
    may share one — and each substring they look for is looked for once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._holds: dict[str, bool] = {}
        self._passes: dict[int, bool] = {}

    def holds(self, k: str) -> bool:
        found = self._holds.get(k)
        if found is None:
            found = self._holds[k] = k in self.text
        return found

    def passes(self, prefilter: Prefilter) -> bool:
        found = self._passes.get(id(prefilter))
        if found is None:
            found = self._passes[id(prefilter)] = prefilter.matches(self.text, self)
        return found


class Rule:
    """A rule: its code, documentation, examples, a cheap textual prefilter, and its check."""

    code: ClassVar[str]
    #: the rule's :class:`Prefilter` (``PREFILTERS[code]`` of :mod:`fabric_lsp.rules.prefilters`)
    prefilter: ClassVar[Prefilter]
    #: the rule judges set-up models only: it skips documents no set-up model can reach
    #: (``Workspace.setups_may_reach``), before they are parsed
    needs_setups: ClassVar[bool] = False
    name: ClassVar[str]
    summary: ClassVar[str]
    doc: ClassVar[str]
    valid: ClassVar[list[Example]] = []
    invalid: ClassVar[list[Example]] = []
    fixable: ClassVar[bool] = False

    def matches(self, text: str) -> bool:
        """Whether the rule's prefilter lets ``text`` through."""
        return self.prefilter.matches(text)

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    def markdown(self) -> str:
        """The rule's documentation page (``docs/rules/<CODE>.md`` and ``fabric-lsp rule``)."""
        return f"# {self.code} ({self.name})\n\n{self.summary}.\n{self.doc.rstrip()}\n"

    @property
    def codes(self) -> tuple[str, ...]:
        return (self.code,)

    def sites(self, model: SemanticModel) -> list[ast.AST]:  # pragma: no cover
        """The nodes this rule judges (calls of the APIs it watches), in document order."""
        raise NotImplementedError

    def verdict(self, model: SemanticModel, site: ast.AST, ctx: RuleContext) -> Verdict | None:  # pragma: no cover
        """The rule's verdict at one site: a finding where it reports one, and what hover says.
        Messages never embed positions (related information carries them): a verdict reused
        for a later version of the document moves with its statement."""
        raise NotImplementedError

    def finding(
        self,
        certainty: Certainty,
        message: str,
        span: Span,
        related: tuple[Related, ...] = (),
        fix: Fix | None = None,
        lightning: str = "",
    ) -> Finding:
        """The rule's finding, its severity the certainty's (an error where Lightning certainly fails)."""
        return Finding(
            code=self.code,
            severity=resolve_severity(certainty, certain=Severity.ERROR),
            message=message,
            span=span,
            related=related,
            fix=fix,
            url=self.url,
            certainty=certainty,
            lightning=lightning,
        )

    def unknown_finding(self, model: SemanticModel, site: ast.AST, message: str) -> Finding:
        """The hint at ``site`` where the configuration the rule judges is not known statically.
        Rules always make it; the analyzer shows it only with ``report-unknown``."""
        return Finding(
            code=self.code,
            severity=resolve_severity(Certainty.UNKNOWN),
            message=message,
            span=model.span(site),
            url=self.url,
            certainty=Certainty.UNKNOWN,
        )

    def hover(self, model: SemanticModel, pos: Pos) -> Explanation | None:
        """What hover says at ``pos`` when it is on none of the rule's sites."""
        return None
