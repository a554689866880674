"""The rules, one module each. Add a rule by adding its module to :func:`_registry` (and its
prefilter to :mod:`fabric_lsp.rules.prefilters`).

``ALL_RULES`` and ``RULES_BY_CODE`` are made on first use (PEP 562): a module of this package
that needs none of the rules' checks, such as :mod:`fabric_lsp.rules.prefilters`, is imported
without them."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from fabric_lsp.engine.rule import Example, Rule, RuleContext

if TYPE_CHECKING:
    ALL_RULES: list[Rule]
    RULES_BY_CODE: dict[str, Rule]


def _registry() -> list[Rule]:
    from fabric_lsp.rules.fab001 import FAB001
    from fabric_lsp.rules.fab002 import FAB002
    from fabric_lsp.rules.fab003 import FAB003
    from fabric_lsp.rules.fab004 import FAB004
    from fabric_lsp.rules.fab005 import FAB005
    from fabric_lsp.rules.fab006 import FAB006
    from fabric_lsp.rules.fab007 import FAB007
    from fabric_lsp.rules.fab008 import FAB008
    from fabric_lsp.rules.fab009 import FAB009
    from fabric_lsp.rules.fab010 import FAB010
    from fabric_lsp.rules.fab011 import FAB011
    from fabric_lsp.rules.pl001 import PL001
    from fabric_lsp.rules.pl002 import PL002
    from fabric_lsp.rules.pl003 import PL003
    from fabric_lsp.rules.pl004 import PL004
    from fabric_lsp.rules.pl005 import PL005
    from fabric_lsp.rules.pl006 import PL006

    return [
        FAB001(),
        FAB002(),
        FAB003(),
        FAB004(),
        FAB005(),
        FAB006(),
        FAB007(),
        FAB008(),
        FAB009(),
        FAB010(),
        FAB011(),
        PL001(),
        PL002(),
        PL003(),
        PL004(),
        PL005(),
        PL006(),
    ]


_LOCK = threading.Lock()


def __getattr__(name: str) -> Any:
    if name not in ("ALL_RULES", "RULES_BY_CODE"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _LOCK:  # made once, whichever thread asks first
        if name not in globals():
            rules = _registry()
            globals().update(ALL_RULES=rules, RULES_BY_CODE={r.code: r for r in rules})
    return globals()[name]


__all__ = ["ALL_RULES", "RULES_BY_CODE", "Example", "Rule", "RuleContext"]
