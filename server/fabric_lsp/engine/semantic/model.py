"""The semantic model of one document: what every rule may ask, computed lazily and shared by all
the rules that run on one version of the document (ruff's ``SemanticModel``, for Fabric)."""

from __future__ import annotations

import ast

from fabric_lsp import facts
from fabric_lsp.engine.findings import Pos, Span
from fabric_lsp.engine.lightning.configurations import Scenario, scenarios, trainer_scenarios
from fabric_lsp.engine.program import batch_scripts, launch, lightning_modules, own_lightning
from fabric_lsp.engine.program.batch_scripts import BatchScript, Launch
from fabric_lsp.engine.program.constructions import (
    ConfigurationProblems,
    configuration_problems,
    constructions,
    workspace_file_exists,
)
from fabric_lsp.engine.program.infer import Inference, is_plain
from fabric_lsp.engine.program.lightning_modules import (
    EntryPoint,
    Hook,
    LightningClass,
    Logged,
    MonitorCallback,
    OptimizerConfig,
    RunModel,
)
from fabric_lsp.engine.program.model_methods import (
    MethodRun,
    ModelClass,
    compiled,
    forward_marks,
    method_run,
    model_classes,
)
from fabric_lsp.engine.program.ranks import RankGuard, rank_guard
from fabric_lsp.engine.program.setups import ModelUse, SetupCall, Setups, origin_key
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.modules import FUNC_TYPES, ModuleInfo
from fabric_lsp.engine.python.values import (
    ClassRef,
    FabricInst,
    Instance,
    StrategyChoice,
    TrainerInst,
    Unknown,
    Value,
)
from fabric_lsp.engine.workspace.jedi_types import infers_fabric, script_for
from fabric_lsp.engine.workspace.memo import AskedOnce
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.facts import LATEST_LIGHTNING, NOTEBOOK_SUFFIX

#: jedi look-ups one analysis may make (the fallback for receivers the evaluator cannot follow)
MAX_JEDI_LOOKUPS = 8


#: why a scenario is unknown where its evaluation ran out of budget
OUT_OF_BUDGET = "the evaluator's budget ran out on its arguments"


class SemanticModel:
    def __init__(self, module: ModuleInfo, workspace: Workspace) -> None:
        self.module = module
        self.workspace = workspace
        self.inference = Inference(workspace)
        self._jedi_lookups = 0
        self._jedi_script = None  # made at the first jedi look-up, then reused
        self._jedi_answers: dict[int, tuple[ast.AST, bool]] = {}  # id(expression) → (it, jedi's answer)
        self._setups: Setups | None = None
        self._method_calls: dict[str, tuple[list[ast.Call], list[ast.Call]]] = {}
        #: answers asked once per analysis (values of expressions, setup calls …), with the
        #: look-ups that found them
        self.asked_once = AskedOnce(module, self.inference)
        self.inference.asked_once = self.asked_once

    @property
    def path(self) -> str | None:
        return self.module.path

    @property
    def interactive(self) -> bool:
        """The document runs in an interactive environment: it is a Jupyter notebook (analysed
        under its ``.ipynb`` path), where Lightning's ``_IS_INTERACTIVE`` holds."""
        return self.path is not None and self.path.lower().endswith(NOTEBOOK_SUFFIX)

    # -- syntax --------------------------------------------------------------------------------
    def method_calls(self, name: str) -> list[ast.Call]:
        """Calls ``<receiver>.name(...)`` in the document, in order."""
        calls = self.module.calls_by_name.get(name, [])  # (records the look-up at every call)
        cached = self._method_calls.get(name)
        if cached is None or cached[0] is not calls:
            cached = (calls, [c for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr == name])
            self._method_calls[name] = cached
        return list(cached[1])

    def fabric_constructions(self) -> list[ast.Call]:
        """The calls in the document that construct a Lightning Fabric (any spelling, a subclass,
        a ``functools.partial`` of one), in order."""
        return constructions(self.module, self.inference)

    def span(self, node: ast.AST) -> Span:
        return self.module.span(node)

    def segment(self, node: ast.AST) -> str:
        return self.module.segment(node)

    def node_at(self, pos: Pos) -> ast.AST | None:
        """The innermost expression covering ``pos``."""
        module = self.module
        top = module.top_for_line(pos.line + 1)
        if top is None:
            return None
        best = None
        for node in walk(top):
            if not isinstance(node, ast.expr) or not hasattr(node, "end_lineno"):
                continue
            start, end = module.lines.node_start(node), module.lines.node_end(node)
            if start <= pos <= end and (
                best is None or (start >= module.lines.node_start(best) and end <= module.lines.node_end(best))
            ):
                best = node
        return best

    def other_modules_mentioning(self, word: str) -> list[ModuleInfo]:
        """The workspace's other modules whose text mentions ``word``; the verdict being computed
        now depends on other modules (incremental reuse waits for the workspace to be unchanged)."""
        return self.workspace.modules_mentioning(word, exclude=self.path)

    # -- values --------------------------------------------------------------------------------
    def values(self, expr: ast.AST) -> list[Value]:
        """The alternatives ``expr`` may evaluate to (bounded; ``Unknown`` where it cannot tell).
        Evaluated once per analysis: rules ask about the same receivers at many sites. The
        look-ups the evaluation made are recorded again for every site that asks (the verdict
        being computed depends on them, as if it had evaluated ``expr`` itself)."""
        return list(self.asked_once(("values", id(expr)), lambda: self.inference.evaluate(expr, self.module)))

    def plain(self, expr: ast.AST) -> bool:
        """Whether every alternative :meth:`values` gives ``expr`` is plain (a constant, a number, a
        string or not known: never a dict, a sequence, a function or an object), read from the
        syntax alone (:func:`~fabric_lsp.engine.program.infer.is_plain`): nothing is evaluated."""
        return is_plain(expr, self.module)

    def fabrics(self, expr: ast.AST, *, by_type: bool = True) -> tuple[list[FabricInst], list[Unknown]]:
        """The Lightning Fabrics ``expr`` may be, and the alternatives that are not known. An
        empty first list means ``expr`` is certainly not a Fabric this analysis can see.

        Where the evaluator knows nothing of ``expr``, jedi is asked whether its type is a Fabric
        (~30 ms a look-up), unless ``by_type`` is false: such a Fabric's configuration is not
        known, so only a check that fails on every configuration, or a hint (``report-unknown``),
        can say anything of it — a caller whose verdict would be neither passes ``False``."""
        if isinstance(expr, ast.BinOp):  # arithmetic or concatenation: a number, a string or not known
            return [], [Unknown("expression")]
        values = self.values(expr)
        fabrics = [v for v in values if isinstance(v, FabricInst)]
        unknown = [v for v in values if isinstance(v, Unknown)]
        if by_type and not fabrics and unknown and len(unknown) == len(values) and self._jedi_says_fabric(expr):
            return [FabricInst((StrategyChoice(None, "a `Fabric` by its type (jedi)", "?"),), None)], []
        return fabrics, unknown

    def receiver_fabrics(self, call: ast.Call, *, by_type: bool = True) -> tuple[list[FabricInst], list[Unknown]]:
        """:meth:`fabrics` of the receiver of the method call ``call``, where a wrapper whose
        ``__getattr__`` forwards to a Fabric (``runner.setup(...)``) stands for that Fabric."""
        assert isinstance(call.func, ast.Attribute)
        values = self.values(call.func.value)
        if not any(isinstance(v, Instance) for v in values):
            return self.fabrics(call.func.value, by_type=by_type)
        method = call.func.attr
        key = ("method_receivers", id(call))
        values = list(self.asked_once(key, lambda: self.inference.method_receivers(values, method, self.module)))
        return [v for v in values if isinstance(v, FabricInst)], [v for v in values if isinstance(v, Unknown)]

    def fabrics_calling(self, method: str) -> set[tuple]:
        """The origins (:func:`~fabric_lsp.engine.program.setups.origin_key`) of the Lightning Fabrics
        on which the document calls ``method``, found once per analysis."""
        return self.asked_once(("fabrics_calling", method), lambda: self._fabrics_calling(method))

    def _fabrics_calling(self, method: str) -> set[tuple]:
        # a Fabric known only by its type has an origin of its own (no other origin equals it): not asked
        calls = self.method_calls(method)
        return {origin_key(f) for call in calls for f in self.fabrics(call.func.value, by_type=False)[0]}  # type: ignore[attr-defined]

    def _jedi_says_fabric(self, expr: ast.AST) -> bool:
        """jedi's answer, for at most :data:`MAX_JEDI_LOOKUPS` expressions per analysis (each
        costs a type inference in the analysed environment)."""
        if self._jedi_lookups >= MAX_JEDI_LOOKUPS or not self.workspace.may_infer_fabric_types():
            return False
        self._jedi_lookups += 1
        known = self._jedi_answers.get(id(expr))
        if known is not None and known[0] is expr:  # the same expression again: the same answer
            if self.module.tree is not None and hasattr(expr, "end_lineno"):
                self.workspace.note_lookup()  # as the look-up it stands for notes itself
            return known[1]
        if self._jedi_script is None:
            self._jedi_script = script_for(self.workspace, self.module)
        answer = infers_fabric(self.workspace, self.module, expr, self._jedi_script)
        self._jedi_answers[id(expr)] = (expr, answer)
        return answer

    def scenarios(self, fabric: FabricInst) -> list[Scenario]:
        """What Lightning makes of ``fabric`` on each path and kind of machine the code can
        choose: strategy, accelerator, devices, processes, precision, launcher — or the error
        ``Fabric(...)`` raises (see :mod:`fabric_lsp.engine.lightning.configurations`); in a notebook, on
        those machines in a notebook. Evaluated under a budget of its own: what an earlier
        evaluation spent (or a deadline it let pass) never decides them; where this one runs out,
        the Fabric's configuration is unknown."""
        unknown = [Scenario(None, None, unknown=(OUT_OF_BUDGET,))]
        return self.inference.bounded(lambda: scenarios(self.inference, fabric, self.interactive), unknown)

    def trainer_scenarios(self, trainer: TrainerInst) -> list[Scenario]:
        """What Lightning's Trainer connector makes of ``trainer`` on each path and kind of machine
        the code can choose, as :meth:`scenarios` for a Fabric (its own budget too)."""
        unknown = [Scenario(None, None, unknown=(OUT_OF_BUDGET,))]
        return self.inference.bounded(lambda: trainer_scenarios(self.inference, trainer, self.interactive), unknown)

    def trainer_constructions(self) -> list[ast.Call]:
        """The calls of the document that build a Lightning ``Trainer`` (a project's subclass, a
        partial of one): a call of a name ending in ``Trainer`` the evaluator makes a Trainer of."""
        return list(self.asked_once(("trainer_constructions",), self._trainer_constructions))

    def _trainer_constructions(self) -> list[ast.Call]:
        m = self.module
        if m.tree is None or "Trainer" not in m.text:
            return []
        return [c for c in m.calls_named_like(lambda name: name.endswith("Trainer")) if self._builds_trainer(c)]

    def _builds_trainer(self, call: ast.Call) -> bool:
        span = self.span(call)
        return any(
            isinstance(v, TrainerInst) and v.origin is not None and v.origin.span == span for v in self.values(call)
        )

    # -- ranks and launch ----------------------------------------------------------------------
    def rank_guard(self, node: ast.AST) -> RankGuard | None:
        """Why ``node`` runs on some ranks only (a rank test, ``@rank_zero_only``, callers that
        are all rank-guarded, ``rank_zero_first()``), or None (see :mod:`fabric_lsp.engine.program.ranks`)."""
        return rank_guard(self.module, node, self.workspace)

    def launches_of(self, fabric: FabricInst) -> tuple[list[tuple[ModuleInfo, ast.Call]], bool]:
        """The ``launch()``/``run()`` calls on ``fabric`` in the workspace, and whether an
        unresolved ``launch`` call may launch it (see :mod:`fabric_lsp.engine.program.launch`)."""
        return launch.launches_of(self, fabric)

    def may_be_launched(self, fabric: FabricInst) -> bool:
        """Whether a ``launch()``/``run()`` call (or an unresolved ``launch``) may launch ``fabric``."""
        return launch.may_be_launched(self, fabric)

    def in_overridden_run(self, call: ast.Call) -> bool:
        """Whether ``call`` is on ``self`` in a class's ``run`` method (launched by Lightning)."""
        return launch.in_overridden_run(self, call)

    def launch_around(self, call: ast.Call) -> launch.Around:
        """The ``launch()`` on ``call``'s receiver before it in the same function (and the test
        that lets it run on several devices only, if one does), else the ``launch()`` after it."""
        return launch.launch_around(self, call)

    def first_needing_launch(self, fabric: FabricInst) -> ast.Call | None:
        """The document's first call of a method that needs ``fabric`` launched."""
        return launch.first_needing_launch(self, fabric)

    def batch_launches(self) -> list[tuple[BatchScript, Launch]]:
        """The workspace's batch-job scripts (SLURM, ``torchrun``, ``fabric run``) that launch this
        document (see :mod:`fabric_lsp.engine.program.batch_scripts`); the verdict depends on them."""
        if self.path is None or self.interactive or not self.workspace.root:
            return []
        return batch_scripts.launches_of(self.workspace, self.path)

    def cli_evidence(self) -> launch.Evidence | None:
        """Where the document or the repository shows scripts run by ``fabric run``."""
        return launch.cli_evidence(self)

    # -- set-up models (engine/program/setups.py) -------------------------------------------------------
    @property
    def setups(self) -> Setups:
        if self._setups is None:
            self._setups = Setups(self.inference, self.workspace, self.asked_once)
        return self._setups

    def may_see_setups(self) -> bool:
        """Whether a set-up model can reach this document's code at all (see
        :meth:`fabric_lsp.engine.program.setups.Setups.may_see_setups`)."""
        return self.setups.may_see_setups(self.module)

    def setup_calls(self) -> list[SetupCall]:
        """The document's ``setup``/``setup_module`` calls on Lightning Fabrics, in order."""
        return self.setups.setup_calls(self.module)

    def setup_call(self, node: ast.AST) -> SetupCall | None:
        """``node`` as a model setup call on a Lightning Fabric, or None."""
        return self.setups.setup_call(node, self.module)

    def models_computing(self, tensor: ast.expr) -> list[ModelUse]:
        """The set-up models whose outputs ``tensor`` is computed from (see engine/program/setups.py)."""
        return self.setups.models_computing(tensor, self.module)

    def set_up_models(self, expr: ast.expr) -> list[SetupCall]:
        """The setup calls whose model ``expr`` may be."""
        return self.setups.models(expr, self.module)

    def set_up_optimizers(self, expr: ast.expr) -> list[ast.Call]:
        """The ``setup``/``setup_optimizers`` calls whose optimizer ``expr`` may be."""
        return self.setups.optimizer_setups(expr, self.module)

    # -- methods of set-up models (engine/program/model_methods.py) -------------------------------------
    def model_classes(self, setup: SetupCall) -> tuple[list[ModelClass], bool]:
        """The classes the model ``setup`` is given may be an instance of, and whether some
        alternative is not known (asked once per analysis: every method call on the model asks)."""
        key = ("model_classes", id(setup.call))
        return self.asked_once(key, lambda: model_classes(self.inference, setup), (setup.call, setup.module))

    def compiled_model(self, setup: SetupCall) -> bool | None:
        """Whether ``setup`` is given a ``torch.compile`` result it compiles again (True: on every
        alternative, None: on some): the module is then wrapped on every strategy."""
        return compiled(self.inference, setup)

    def method_run(self, model_class: ModelClass, name: str) -> MethodRun:
        """What ``model.<name>()`` runs on an instance of ``model_class``, and where it runs a module."""
        return method_run(self.inference, model_class, name)

    def forward_marks(self, setups: list[SetupCall], name: str) -> list[tuple[ModuleInfo, ast.Call]]:
        """The ``mark_forward_method("name")`` calls on models set up by ``setups`` (in this
        document and in the modules of those setups)."""
        modules = {id(self.module): self.module}
        for s in setups:
            modules.setdefault(id(s.module), s.module)
        return forward_marks(self.setups, setups, name, list(modules.values()))

    # -- configurations (engine/program/constructions.py) ----------------------------------------------
    def configuration_problems(
        self, fabric: FabricInst, lightning_version: str = LATEST_LIGHTNING
    ) -> ConfigurationProblems:
        """The configurations of ``fabric`` Lightning (``lightning_version``) rejects at
        construction or at launch, or changes with a warning, judged on every machine each
        configuration can mean."""
        exists = workspace_file_exists(self.module.path, self.workspace.root)
        return configuration_problems(self.scenarios(fabric), lightning_version, exists)

    def trainer_configuration_problems(self, trainer: TrainerInst) -> ConfigurationProblems:
        """The configurations of ``trainer`` whose ``Trainer(...)`` Lightning 2.6.6 rejects, judged
        on every machine each configuration can mean (as :meth:`configuration_problems`)."""
        return configuration_problems(self.trainer_scenarios(trainer), trainer=True)

    # -- LightningModules and callbacks (engine/program/lightning_modules.py) --------------------------
    def lightning_classes(self, defining: frozenset[str] | None = None) -> list[LightningClass]:
        """The document's classes deriving from a LightningModule, DataModule or Callback (whose
        bodies define one of the methods ``defining``, when given: the bases of no other class
        are evaluated)."""

        def compute() -> list[LightningClass]:
            classes = [
                node for node in self.module.classes() if node.bases and (defining is None or _defines(node, defining))
            ]
            found = (self.lightning_class(ClassRef(node, self.module)) for node in classes)
            return [lc for lc in found if lc is not None]

        return list(self.asked_once(("lightning_classes", defining), compute))

    def lightning_class(self, cls: ClassRef) -> LightningClass | None:
        """``cls`` as a LightningModule, DataModule or Callback of analysed source, or None. The
        classes at the top of a module with the same bases (``nn.Module`` four hundred times) are
        judged once."""
        tree = cls.module.tree
        top = tree is not None and cls.node in tree.body
        bases = tuple(cls.module.segment(b) for b in cls.node.bases)
        key = ("lightning_base", id(cls.module), bases) if top else ("lightning_base", id(cls.node))
        base = self.asked_once(key, lambda: lightning_modules.lightning_base(self.inference, cls))
        return LightningClass(cls, base) if base is not None else None

    def own_instance_not_trainer(self, expr: ast.AST) -> bool:
        """Whether ``expr`` is ``self`` in a method of a class that derives from no Trainer (its
        ``self.fit(...)`` is the class's own method), told from the class's bases alone."""
        return lightning_modules.own_instance_not_trainer(self.inference, self.module, expr)

    def hook(self, cls: ClassRef, name: str) -> Hook | None:
        """The ``def name`` that instances of ``cls`` run (through the user part of the MRO)."""
        return lightning_modules.hook(self.inference, cls, name)

    def defines_attribute(self, cls: ClassRef, name: str) -> bool:
        """Whether a user class of ``cls``'s MRO defines ``name`` (method, property, assignment)."""
        return lightning_modules.defines_attribute(self.inference, cls, name)

    def entry_points(self, cls: ClassRef) -> list[EntryPoint]:
        """The ``trainer.fit/validate/test/predict(model)`` calls of the workspace that may run an
        instance of ``cls`` (or of a subclass); the verdict depends on the other modules."""
        key = ("entry_points", id(cls.node))
        return list(self.asked_once(key, lambda: lightning_modules.entry_points(self.inference, self.workspace, cls)))

    def refused_by_every_trainer(self, cls: ClassRef) -> bool:
        """Whether the LightningModule ``cls`` derives from one import style's ``LightningModule``
        (``pytorch_lightning`` or ``lightning``) while every Trainer the workspace's entry points
        run is of the other, and there is one: those Trainers refuse it (``TypeError``,
        ``utilities/model_helpers.py:96``) — a vendored copy of another project's 1.x code, say.
        The verdict depends on the other modules."""
        style = self.asked_once(
            ("module_import_style", id(cls.node)),
            lambda: lightning_modules.class_import_style(self.inference, cls, facts.LIGHTNING_MODULE_CLASS),
        )
        if style is None:
            return False
        styles = self.asked_once(
            ("trainer_import_styles",),
            lambda: lightning_modules.trainer_import_styles(self.inference, self.workspace, self.module),
        )
        return bool(styles) and style not in (styles or ())

    def workspace_runs(self) -> list[RunModel] | None:
        """The LightningModule classes the workspace's entry points may run: each one followed
        to instances, or known by the type its model is declared with (any subclass of it); None
        where one is not known. The verdict depends on the other modules."""
        found = self.asked_once(
            ("workspace_runs",), lambda: lightning_modules.workspace_runs(self.inference, self.workspace, self.module)
        )
        return None if found is None else list(found)

    def may_run(self, run: RunModel, cls: ClassRef) -> bool:
        """Whether the model of an entry point ``run`` stands for may be an instance of ``cls``."""
        return lightning_modules.may_run(self.inference, run, cls)

    def logged(self, cls: ClassRef) -> Logged:
        """The keys the hooks of the LightningModule ``cls`` log (``self.log``/``self.log_dict``,
        directly or through its methods), each with its hook and levels, and whether that is all."""
        return self.asked_once(("logged", id(cls.node)), lambda: lightning_modules.logged(self.inference, cls))

    def trainer_keywords(self, package: str) -> frozenset[str] | None:
        """The parameters of ``Trainer.__init__`` in the ``package`` (``lightning`` or
        ``pytorch_lightning``) the analysed code runs: the project's own tree, else the analysed
        environment's install; None when neither is found."""
        return self.asked_once(
            ("trainer_keywords", package), lambda: own_lightning.trainer_keywords(self.workspace, package)
        )

    def may_return_legacy_results(self, cls: ClassRef) -> bool:
        """Whether a hook of the LightningModule ``cls`` may return the ``"log"``/``"progress_bar"``
        dict or ``Result`` that fed the monitors before Lightning 1.3."""
        return lightning_modules.may_return_legacy_results(self.inference, cls)

    def configure_optimizers(self, cls: ClassRef) -> list[OptimizerConfig] | None:
        """What ``configure_optimizers`` of ``cls`` may return, per ``return``: how many optimizers,
        each scheduler's ``monitor`` and whether it is a ``ReduceLROnPlateau`` (None: not defined
        in analysed source)."""
        return lightning_modules.configure_optimizers(self.inference, cls)

    def monitor_callback(self, call: ast.Call) -> MonitorCallback | None:
        """``call`` as a ``ModelCheckpoint(...)``/``EarlyStopping(...)`` construction, with its
        ``monitor``, ``save_top_k``, ``mode`` and ``strict`` as the evaluator gives them."""
        return self.asked_once(
            ("monitor_callback", id(call)),
            lambda: lightning_modules.monitor_callback(self.inference, call, self.module),
        )

    def entry_point_classes(self, call: ast.Call) -> tuple[list[LightningClass], bool]:
        """The LightningModule classes the entry-point call ``trainer.fit(model, ...)`` (``validate``,
        ``test``, ``predict``; ``model=`` too) may run, and whether some alternative is not known."""
        key = ("entry_point_classes", id(call))
        return self.asked_once(key, lambda: lightning_modules.entry_point_classes(self.inference, call, self.module))

    def automatic_optimization(self, cls: ClassRef) -> bool | None:
        """``automatic_optimization`` of instances of ``cls`` (None: not known)."""
        return lightning_modules.automatic_optimization(self.inference, cls)

    def trainer_init_forwards(self, cls: ClassRef, keywords: set[str]) -> bool | None:
        """For a Trainer subclass: whether ``keywords`` given to its construction reach
        ``Trainer.__init__`` unchanged (None: not known)."""
        return lightning_modules.trainer_init_forwards(self.inference, cls, keywords)


def _defines(cls: ast.ClassDef, names: frozenset[str]) -> bool:
    return any(isinstance(item, FUNC_TYPES) and item.name in names for item in cls.body)
