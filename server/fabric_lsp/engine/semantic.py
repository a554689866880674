"""The semantic model of one document: what every rule may ask, computed lazily and shared by all
the rules that run on one version of the document (ruff's ``SemanticModel``, for Fabric)."""

from __future__ import annotations

import ast
from typing import Optional

from fabric_lsp.engine.configuration import Scenario, scenarios
from fabric_lsp.engine.constructions import Judgement, configuration_problems, constructions, workspace_file_exists
from fabric_lsp.engine.infer import Inference
from fabric_lsp.engine.model import Pos, Span
from fabric_lsp.engine.modules import ModuleInfo
from fabric_lsp.engine.jedi_types import infers_fabric
from fabric_lsp.engine.values import FabricInst, StrategyChoice, Unknown, Value
from fabric_lsp.engine.workspace import Workspace
from fabric_lsp.facts import LATEST_LIGHTNING

NOTEBOOK_SUFFIX = ".ipynb"


#: jedi look-ups one analysis may make (the fallback for receivers the evaluator cannot follow)
MAX_JEDI_LOOKUPS = 8


class SemanticModel:
    def __init__(self, module: ModuleInfo, workspace: Workspace) -> None:
        self.module = module
        self.workspace = workspace
        self.inference = Inference(workspace)
        self._jedi_lookups = 0

    @property
    def path(self) -> Optional[str]:
        return self.module.path

    @property
    def interactive(self) -> bool:
        """The document runs in an interactive environment: it is a Jupyter notebook (analysed
        under its ``.ipynb`` path), where Lightning's ``_IS_INTERACTIVE`` holds."""
        return self.path is not None and self.path.lower().endswith(NOTEBOOK_SUFFIX)

    # -- syntax --------------------------------------------------------------------------------
    def method_calls(self, name: str) -> list[ast.Call]:
        """Calls ``<receiver>.name(...)`` in the document, in order."""
        return [c for c in self.module.calls_by_name.get(name, []) if isinstance(c.func, ast.Attribute) and c.func.attr == name]

    def fabric_constructions(self) -> list[ast.Call]:
        """The calls in the document that construct a Lightning Fabric (any spelling, a subclass,
        a ``functools.partial`` of one), in order."""
        return constructions(self.module, self.inference)

    def span(self, node: ast.AST) -> Span:
        return self.module.span(node)

    def segment(self, node: ast.AST) -> str:
        return self.module.segment(node)

    def node_at(self, pos: Pos) -> Optional[ast.AST]:
        """The innermost expression covering ``pos``."""
        module = self.module
        top = module.top_for_line(pos.line + 1)
        if top is None:
            return None
        best = None
        for node in ast.walk(top):
            if not isinstance(node, ast.expr) or not hasattr(node, "end_lineno"):
                continue
            start, end = module.lines.node_start(node), module.lines.node_end(node)
            if start <= pos <= end and (best is None or (start >= module.lines.node_start(best) and end <= module.lines.node_end(best))):
                best = node
        return best

    def other_modules_mentioning(self, word: str) -> list[ModuleInfo]:
        """The workspace's other modules whose text mentions ``word``; the verdict being computed
        now depends on other modules (incremental reuse waits for the workspace to be unchanged)."""
        self.inference.external_lookups += 1
        return self.workspace.modules_mentioning(word, exclude=self.path)

    # -- values --------------------------------------------------------------------------------
    def values(self, expr: ast.AST) -> list[Value]:
        """The alternatives ``expr`` may evaluate to (bounded; ``Unknown`` where it cannot tell)."""
        return self.inference.evaluate(expr, self.module)

    def fabrics(self, expr: ast.AST) -> tuple[list[FabricInst], list[Unknown]]:
        """The Lightning Fabrics ``expr`` may be, and the alternatives that are not known. An
        empty first list means ``expr`` is certainly not a Fabric this analysis can see."""
        values = self.values(expr)
        fabrics = [v for v in values if isinstance(v, FabricInst)]
        unknown = [v for v in values if isinstance(v, Unknown)]
        if not fabrics and unknown and len(unknown) == len(values) and self._jedi_says_fabric(expr):
            return [FabricInst((StrategyChoice(None, "a `Fabric` by its type (jedi)", "?"),), None)], []
        return fabrics, unknown

    def _jedi_says_fabric(self, expr: ast.AST) -> bool:
        """jedi's answer, for at most :data:`MAX_JEDI_LOOKUPS` expressions per analysis (each
        costs a type inference in the analysed environment)."""
        if self._jedi_lookups >= MAX_JEDI_LOOKUPS:
            return False
        self._jedi_lookups += 1
        self.inference.external_lookups += 1  # jedi reads the environment: a workspace dependency
        return infers_fabric(self.workspace, self.module, expr)

    def scenarios(self, fabric: FabricInst) -> list[Scenario]:
        """What Lightning makes of ``fabric`` on each path and kind of machine the code can
        choose: strategy, accelerator, devices, processes, precision, launcher — or the error
        ``Fabric(...)`` raises (see :mod:`fabric_lsp.engine.configuration`); in a notebook, on
        those machines in a notebook."""
        return scenarios(self.inference, fabric, self.interactive)

    def configuration_problems(self, fabric: FabricInst, lightning_version: str = LATEST_LIGHTNING) -> Judgement:
        """The configurations of ``fabric`` Lightning (``lightning_version``) rejects at
        construction or at launch, or changes with a warning, judged on every machine each
        configuration can mean."""
        exists = workspace_file_exists(self.module.path, self.workspace.root)
        return configuration_problems(self.scenarios(fabric), lightning_version, exists)
