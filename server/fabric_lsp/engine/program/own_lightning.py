"""The Lightning the analysed code runs, read from its source: the project's own tree when the
project is Lightning's repository (or vendors a copy), else the analysed environment's install.
Its ``Trainer`` may be newer than the release the rules describe."""

from __future__ import annotations

import ast

from fabric_lsp import facts
from fabric_lsp.engine.workspace.workspace import Workspace


def trainer_keywords(workspace: Workspace, package: str) -> frozenset[str] | None:
    """The parameters of ``Trainer.__init__`` in the source of ``package`` (``lightning`` or
    ``pytorch_lightning``) the analysis finds (under the project root or its ``src/``, else
    installed), or None when there is none (or it does not parse)."""
    qualname = facts.TRAINER_MODULES.get(package)
    path = workspace.find_module_path(qualname, None) if qualname else None
    module = workspace.load_path(path) if path else None
    init = _trainer_init(module.tree) if module is not None and module.tree is not None else None
    if init is None:
        return None
    return frozenset(a.arg for a in (*init.args.args, *init.args.kwonlyargs))


def _trainer_init(tree: ast.Module) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Trainer":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    return item
    return None
