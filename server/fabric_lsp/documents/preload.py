"""What every analysis needs, imported by a process that forks workers before it forks them
(``fabric-lsp check``'s process, the server's fork server): a forked worker then starts with
the engine and the rule registry in place instead of importing them for itself. jedi is not
among them: an analysis asks it only where the analysed environment is another interpreter
(:mod:`fabric_lsp.engine.workspace.module_finder`) or for a receiver's type, and those who fork
import it themselves where it may be asked."""

from __future__ import annotations

import fabric_lsp.documents.analyzers  # noqa: F401
import fabric_lsp.engine.program.infer  # noqa: F401
from fabric_lsp.rules import ALL_RULES  # noqa: F401  (the registry, made on first use)
