"""jedi as the fallback for receivers the evaluator cannot follow: the type of an expression from
third-party code (a library function annotated ``-> L.Fabric``, an attribute typed ``Fabric`` of
a class in an installed package). What it can say is "this is a Lightning Fabric" — with an
unknown configuration, which is all several rules need to know."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from fabric_lsp import facts

if TYPE_CHECKING:  # pragma: no cover
    from fabric_lsp.engine.python.modules import ModuleInfo
    from fabric_lsp.engine.workspace.workspace import Workspace


def script_for(workspace: Workspace, module: ModuleInfo):
    """A jedi Script of the module's text in the analysed environment (one per analysis: jedi
    parses the whole text when the Script is made), or None where jedi cannot make one."""
    try:
        import jedi

        environment = workspace.jedi_environment
        if module.path is not None and workspace.holds_on_disk(module.path, module.text):
            _parsed_from_cache(environment, module.path)
        return jedi.Script(module.text, path=module.path, project=workspace.jedi_project, environment=environment)
    except Exception as exc:  # jedi fails on odd code: the answer is "not known"
        workspace.log(f"fabric-lsp: jedi could not read {module.path or 'the document'}: {type(exc).__name__}: {exc}")
        return None


def _parsed_from_cache(environment, path: str) -> None:
    """Have jedi find the module at ``path`` (its text as on disk) parsed already. jedi parses a
    Script's own text afresh (its disk cache off), while it loads the modules it imports from
    that cache; loaded that way first (a module another Script imported is parsed already), the
    Script's parse finds the same lines in parso's cache and keeps that tree (the same tree a
    fresh parse gives): on Lightning's repository, a quarter of a check."""
    import jedi.settings

    try:
        environment.get_grammar().parse(
            path=path, cache=True, diff_cache=True, cache_path=jedi.settings.cache_directory
        )
    except Exception:  # noqa: BLE001 - not read here: the Script parses its text itself
        return


def infers_fabric(workspace: Workspace, module: ModuleInfo, node: ast.AST, script=None) -> bool:
    """Whether jedi infers the expression ``node`` (its last name) to be a Lightning Fabric;
    ``script`` is the module's Script when the caller keeps one."""
    if module.tree is None or not hasattr(node, "end_lineno"):
        return False
    workspace.note_lookup()  # jedi reads the analysed environment
    script = script or script_for(workspace, module)
    if script is None:
        return False
    try:
        end = module.lines.node_end(node)
        names = script.infer(end.line + 1, max(end.col - 1, 0))
    except Exception as exc:  # jedi fails on odd code: the answer is "not known"
        workspace.log(f"fabric-lsp: jedi could not infer `{module.segment(node)}`: {type(exc).__name__}: {exc}")
        return False
    return any(facts.is_fabric_class(n.full_name or "") and n.type == "instance" for n in names)
