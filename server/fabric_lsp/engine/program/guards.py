"""Narrowing by guards: which strategy choices can still reach a call, given the tests around it.

The tests that hold whenever a call runs come from :mod:`fabric_lsp.engine.python.flow` (enclosing
``if`` branches, earlier branches that always leave, ``assert``). Each such test narrows the
choices:

- ``isinstance(fabric.strategy, classes)`` (or ``fabric._strategy``) — classes resolved by
  inference, so aliases and project subclasses count; also through a helper function whose body
  is ``return isinstance(param.strategy, ...)``;
- comparisons of values whose alternatives are known (``strategy == "ddp"``,
  ``"deepspeed" in args.strategy``, ``name.startswith("xla")``, ``and``/``or``/``not``): a choice
  whose originating value makes the test false on this path is dropped.

Evaluation is three-valued: anything not understood leaves the choices as they are.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Callable

from fabric_lsp import facts
from fabric_lsp.engine.program.infer import (
    ClassRef,
    Const,
    FuncRef,
    Inference,
    QualRef,
    Seq,
    StrategyChoice,
)
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.flow import conditions
from fabric_lsp.engine.python.modules import FUNC_TYPES, ModuleInfo
from fabric_lsp.engine.python.truth import truth as _truth


class Narrower:
    def __init__(self, module: ModuleInfo, inference: Inference, receiver: ast.AST) -> None:
        self.module = module
        self.inference = inference
        self.receiver = receiver

    def narrow(self, call: ast.AST, choices: list[StrategyChoice]) -> list[StrategyChoice]:
        for test, truth in conditions(self.module, call):
            choices = self.apply(
                test, truth, choices, lambda e: ast.dump(e) == ast.dump(self.receiver), self.module, depth=0
            )
        return choices

    # -- one test ------------------------------------------------------------------------------
    def apply(self, test, truth: bool, choices, is_receiver: Callable[[ast.AST], bool], module: ModuleInfo, depth: int):
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, truth = test.operand, not truth
        kinds = self._isinstance_kinds(test, is_receiver, module)
        if kinds is not None:
            kinds_set, names = kinds
            if truth:
                return [c for c in choices if c.kind is None or c.kind in kinds_set or c.class_name in names]
            return [c for c in choices if not (c.kind in kinds_set or c.class_name in names)]
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and truth:
            for value in test.values:  # all of them hold
                choices = self.apply(value, True, choices, is_receiver, module, depth)
            return choices
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) and not truth:
            for value in test.values:  # none of them holds
                choices = self.apply(value, False, choices, is_receiver, module, depth)
            return choices
        if isinstance(test, ast.Call) and depth < 3:
            narrowed = self._through_helper(test, truth, choices, is_receiver, module, depth)
            if narrowed is not None:
                return narrowed
        return self._by_values(test, truth, choices, module, is_receiver)

    def _isinstance_kinds(self, test, is_receiver, module: ModuleInfo):
        if not (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and len(test.args) == 2
            and isinstance(test.args[0], ast.Attribute)
            and test.args[0].attr in ("strategy", "_strategy")
            and is_receiver(test.args[0].value)
        ):
            return None
        classes = test.args[1]
        elts = classes.elts if isinstance(classes, (ast.Tuple, ast.List)) else [classes]
        kinds, names = set(), set()
        for e in elts:
            for v in self.inference.evaluate(e, module):
                if isinstance(v, QualRef):
                    kind = facts.strategy_kind_of_class(v.qualname)
                    if kind is not None:
                        kinds.add(kind)
                elif isinstance(v, ClassRef):
                    names.add(v.name)
            if isinstance(e, (ast.Name, ast.Attribute)):  # unresolvable: match by the class name written
                kind = facts.strategy_kind_of_class_name(e.id if isinstance(e, ast.Name) else e.attr)
                if kind is not None:
                    kinds.add(kind)
        return kinds, names

    def _through_helper(self, test: ast.Call, truth, choices, is_receiver, module: ModuleInfo, depth: int):
        """``needs_joint_setup(fabric)`` whose body is ``return isinstance(f.strategy, ...)``."""
        for callee in self.inference.evaluate(test.func, module):
            if not isinstance(callee, FuncRef) or not isinstance(callee.node, FUNC_TYPES):
                continue
            body = [s for s in callee.node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
                continue
            params = [p.arg for p in (*callee.node.args.posonlyargs, *callee.node.args.args)]
            aliases = {p for p, a in zip(params, test.args) if is_receiver(a)}
            aliases |= {kw.arg for kw in test.keywords if kw.arg and is_receiver(kw.value)}
            if not aliases:
                continue
            inner = lambda e, aliases=aliases: isinstance(e, ast.Name) and e.id in aliases  # noqa: E731
            return self.apply(body[0].value, truth, choices, inner, callee.module, depth + 1)
        return None

    # -- comparisons of known values -----------------------------------------------------------
    def _by_values(self, test, truth: bool, choices, module: ModuleInfo, is_receiver: Callable[[ast.AST], bool]):
        """Drop the choices whose own value makes ``test`` take the other branch: a value the
        choice came from (``args.strategy == "ddp"``), or the name of the strategy class it gives
        (``type(fabric.strategy).__name__ == "DeepSpeedStrategy"``); constants the test compares
        with (``JOINT_ONLY``, a tuple or frozenset of a module, maybe imported) are the same on
        every path."""
        probes = list(_probes(test))
        if not probes:
            return choices
        alternatives: dict[str, list[Const]] = {}
        common: dict[str, object] = {}
        class_names: set[str] = set()
        for probe in probes:
            key = ast.dump(probe)
            if _is_class_name_of(probe, is_receiver):
                class_names.add(key)
                continue
            values = self.inference.evaluate(probe, module)
            constant = self._collection(values)
            if constant is not None:
                common[key] = constant
            alternatives[key] = [v for v in values if isinstance(v, Const) and v.origin is not None]
        return [c for c in choices if self._may_hold(test, truth, c, alternatives, common, class_names)]

    def _collection(self, values: list) -> tuple | None:
        """The items of a constant tuple/list/set display (the one value of a probe), if known."""
        seq = values[0] if len(values) == 1 else None
        ctx = seq.ctx if isinstance(seq, Seq) else None
        if not isinstance(seq, Seq) or ctx is None:
            return None
        items = []
        for item in seq.items:
            vals = self.inference.ev(item, ctx)
            if len(vals) != 1 or not isinstance(vals[0], Const):
                return None
            items.append(vals[0].value)
        return tuple(items)

    @staticmethod
    def _may_hold(
        test, truth: bool, c: StrategyChoice, alternatives: dict, common: dict, class_names: set[str]
    ) -> bool:
        env: dict[str, object] = {}
        if c.origin is not None:
            for key, consts in alternatives.items():
                for v in consts:
                    if v.origin is not None and (v.origin.path, v.origin.span) == (c.origin.path, c.origin.span):
                        env[key] = v.value
        if c.kind is not None:
            env.update({key: c.class_name for key in class_names})
        if not env:
            return True
        result = _truth(test, {**common, **env})
        return result is None or result == truth


def _is_class_name_of(node: ast.AST, is_receiver: Callable[[ast.AST], bool]) -> bool:
    """``type(R.strategy).__name__`` or ``R.strategy.__class__.__name__`` for the receiver R."""
    if not (isinstance(node, ast.Attribute) and node.attr == "__name__"):
        return False
    inner = node.value
    if (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Name)
        and inner.func.id == "type"
        and len(inner.args) == 1
    ):
        strategy = inner.args[0]
    elif isinstance(inner, ast.Attribute) and inner.attr == "__class__":
        strategy = inner.value
    else:
        return False
    return (
        isinstance(strategy, ast.Attribute)
        and strategy.attr in ("strategy", "_strategy")
        and is_receiver(strategy.value)
    )


def _probes(test: ast.AST) -> Iterator[ast.AST]:
    """The non-constant operands that the test compares."""
    seen = set()
    for node in walk(test):
        candidates = []
        if isinstance(node, ast.Compare):
            candidates = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            candidates = [node.func.value]
        for c in candidates:
            while (
                isinstance(c, ast.Call)
                and isinstance(c.func, ast.Attribute)
                and c.func.attr in ("lower", "upper", "strip", "casefold")
            ):
                c = c.func.value
            if isinstance(c, (ast.Name, ast.Attribute, ast.Subscript)) and ast.dump(c) not in seen:
                seen.add(ast.dump(c))
                yield c
