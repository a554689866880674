"""The rules, one module each. Add a rule by adding its module here."""

from fabric_lsp.engine.rule import Example, Rule, RuleContext
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

ALL_RULES: list[Rule] = [
    FAB001(), FAB002(), FAB003(), FAB004(), FAB005(), FAB006(), FAB007(), FAB008(), FAB009(), FAB010(), FAB011(),
    PL001(), PL002(), PL003(), PL004(), PL005(),
]
RULES_BY_CODE = {r.code: r for r in ALL_RULES}

__all__ = ["ALL_RULES", "RULES_BY_CODE", "Example", "Rule", "RuleContext"]
