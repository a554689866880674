"""PL004's fixes, each offered only where the rewrite means the same on every configuration and
the result parses:

- ``Trainer(gpus=N)`` → ``accelerator="gpu", devices=N`` for a literal ``N`` (an int other than 0,
  ``-1``, a list of device indices), ``accelerator="cpu"`` for ``gpus=0``/``gpus=None`` (1.x ran those on the CPU),
  only where neither ``accelerator`` nor ``devices`` nor ``**kwargs`` is given;
- ``model.load_from_checkpoint(p)`` → ``Cls.load_from_checkpoint(p)`` (``type(model)`` where the
  class's name is not certainly bound to it here), assigned back to ``model`` when the call was
  an expression statement (its result was dropped: the instance is never loaded in place);
- ``def validation_epoch_end(self, outputs)`` → ``def on_validation_epoch_end(self)`` where
  ``outputs`` is not used, the new name is not defined already and the old one is not used
  anywhere else in the workspace.
"""

from __future__ import annotations

import ast
import re

from fabric_lsp.engine.findings import Applicability, Edit, Fix, Pos, Span
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.text import apply_edits
from fabric_lsp.engine.python.values import ClassRef
from fabric_lsp.engine.semantic.model import SemanticModel


def _checked(model: SemanticModel, title: str, edits: list[Edit]) -> Fix | None:
    try:
        ast.parse(apply_edits(model.module.text, edits))
    except SyntaxError:
        return None
    return Fix(title, Applicability.SAFE, tuple(edits))


# -- gpus= -------------------------------------------------------------------------------------------
def gpus_fix(model: SemanticModel, call: ast.Call) -> Fix | None:
    names = {k.arg for k in call.keywords}
    if None in names or "accelerator" in names or "devices" in names:
        return None
    kw = next(k for k in call.keywords if k.arg == "gpus")
    new = _gpus_replacement(model, kw.value)
    if new is None:
        return None
    return _checked(model, f"Replace `gpus=` with `{new}`", [Edit(model.span(kw), new)])


def _gpus_replacement(model: SemanticModel, value: ast.expr) -> str | None:
    if (
        isinstance(value, ast.Constant)
        and (value.value is None or value.value == 0)
        and not isinstance(value.value, bool)
    ):
        return 'accelerator="cpu"'
    if _int_literal(value) or (
        isinstance(value, (ast.List, ast.Tuple)) and value.elts and all(_device_index(e) for e in value.elts)
    ):
        return f'accelerator="gpu", devices={model.segment(value)}'
    return None


def _device_index(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0


def _int_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant) and node.operand.value == 1 and type(node.operand.value) is int
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value != 0


# -- load_from_checkpoint on an instance ----------------------------------------------------------
def load_fix(model: SemanticModel, call: ast.Call, cls: ClassRef) -> Fix | None:
    assert isinstance(call.func, ast.Attribute)
    receiver = call.func.value
    if not _plain_reference(receiver):
        return None
    text = model.segment(receiver)
    owner = cls.name if _class_name_certain(model, cls) else f"type({text})"
    edits = [Edit(model.span(receiver), owner)]
    stmt = model.module.parent_of(call)
    if isinstance(stmt, ast.Expr):
        edits.insert(0, Edit(Span(model.span(stmt).start, model.span(stmt).start), f"{text} = "))
    title = f"Call `{owner}.load_from_checkpoint(...)`" + (
        f" and assign it to `{text}`" if isinstance(stmt, ast.Expr) else ""
    )
    return _checked(model, title, edits)


def _plain_reference(node: ast.AST) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _class_name_certain(model: SemanticModel, cls: ClassRef) -> bool:
    """The class is defined at the top of this document and its name is bound nowhere else."""
    tree = model.module.tree
    if cls.module is not model.module or tree is None or cls.node not in tree.body:
        return False
    name = re.escape(cls.name)
    text = model.module.text
    rebinds = rf"\b{name}\s*(?::[^=\n]*)?=(?!=)|\bas\s+{name}\b|\bdef\s+{name}\b|\bimport\s+{name}\b|\bfor\s+{name}\b"
    return len(re.findall(rf"\bclass\s+{name}\b", text)) == 1 and re.search(rebinds, text) is None


# -- the epoch-end hooks ------------------------------------------------------------------------------
def hook_fix(
    model: SemanticModel, cls: ClassRef, func: ast.FunctionDef | ast.AsyncFunctionDef, new_name: str
) -> Fix | None:
    a = func.args
    if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults or not 1 <= len(a.args) <= 2:
        return None
    if len(a.args) == 2 and _uses(func, a.args[1].arg):
        return None
    if model.defines_attribute(cls, new_name) or not _only_mention(model, func.name):
        return None
    start = model.module.lines.node_start(func)
    line = model.module.lines.line(start.line)
    m = re.compile(r"(?:async\s+)?def\s+(\w+)").match(line, start.col)
    if m is None:
        return None
    edits = [Edit(Span(Pos(start.line, m.start(1)), Pos(start.line, m.end(1))), new_name)]
    if len(a.args) == 2:
        edits.append(Edit(Span(model.span(a.args[0]).end, model.span(a.args[1]).end), ""))
    return _checked(model, f"Rename to `{new_name}` (it takes no `outputs`)", edits)


def _uses(func: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for stmt in func.body for n in ast.walk(stmt))  # type: ignore[attr-defined]


def _only_mention(model: SemanticModel, name: str) -> bool:
    """``name`` appears once in this document's code (its ``def``; comments and docstrings do not
    count, any other string does: ``getattr(self, name)``) and in no other module."""
    tree = model.module.tree
    if tree is None:
        return False
    docstrings = {id(n.body[0].value) for n in walk(tree) if _has_docstring(n)}  # type: ignore[attr-defined]
    word = re.compile(rf"\b{re.escape(name)}\b")
    uses = 0
    for n in walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            uses += 0 if id(n) in docstrings else len(word.findall(n.value))
        elif isinstance(
            n,
            (
                ast.Name,
                ast.Attribute,
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.ClassDef,
                ast.arg,
                ast.keyword,
                ast.alias,
            ),
        ):
            uses += _named(n) == name
    return uses == 1 and not model.other_modules_mentioning(name)


def _has_docstring(node: ast.AST) -> bool:
    body = getattr(node, "body", None)
    if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) or not body:
        return False
    first = body[0]
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def _named(node: ast.AST) -> str | None:
    for attr in ("id", "attr", "name", "arg"):
        value = getattr(node, attr, None)
        if isinstance(value, str):
            return value
    return None
