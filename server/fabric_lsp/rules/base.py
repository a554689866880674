"""What a rule is: code, documentation, examples that are also its tests, and a check."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Callable, ClassVar, Optional

from fabric_lsp.engine.model import Finding, Severity

DOCS_URL = "https://github.com/fabric-lsp/fabric-lsp/blob/main/docs/rules/{code}.md"
REQUIRED_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Which strategies")


@dataclass(frozen=True)
class Example:
    title: str
    code: str
    severity: Optional[Severity] = None  # for invalid examples: the expected severity
    fixed: Optional[str] = None  # for invalid examples: the text after applying the fix

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).lstrip("\n")

    @property
    def fixed_source(self) -> Optional[str]:
        return None if self.fixed is None else textwrap.dedent(self.fixed).lstrip("\n")


@dataclass
class RuleContext:
    log: Callable[[str], None] = lambda msg: None
    #: report a hint where a Fabric's strategy cannot be determined statically
    report_unknown: bool = False


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    doc: ClassVar[str]
    valid: ClassVar[list[Example]] = []
    invalid: ClassVar[list[Example]] = []
    fixable: ClassVar[bool] = False

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    def markdown(self) -> str:
        """The rule's documentation page (``docs/rules/<CODE>.md`` and ``fabric-lsp rule``)."""
        return f"# {self.code} ({self.name})\n\n{self.summary}.\n{self.doc.rstrip()}\n"

    def check(self, module, inference, ctx: RuleContext) -> list[Finding]:  # pragma: no cover
        raise NotImplementedError
