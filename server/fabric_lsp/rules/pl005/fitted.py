"""Whether a ``fit`` ran on a Trainer before a ``test``/``validate``/``predict`` call."""

from __future__ import annotations

import ast
import enum

from fabric_lsp.engine.python import paths
from fabric_lsp.engine.python.astwalk import walk
from fabric_lsp.engine.python.values import Const, TrainerInst
from fabric_lsp.engine.semantic.model import SemanticModel

#: ``Trainer.fit``'s positional parameters after ``model``, up to ``ckpt_path``
_FIT_CKPT_INDEX = 4


class Fitted(enum.Enum):
    YES = "a `fit` on it runs before"
    RESUMED = "a `fit` on it resumes from a checkpoint before"  # the callback's state is the checkpoint's
    NO = "no `fit` runs on it"
    UNKNOWN = "not known"


def fitted(model: SemanticModel, site: ast.Call, inst: TrainerInst) -> list[tuple[Fitted, frozenset]]:
    """What ran on the Trainer before the site, one alternative per path: ``YES``/``RESUMED``
    where a ``fit`` call on the same Trainer (its receiver evaluates to the same ``Trainer(...)``
    call) is a statement of a block that holds the site after it, in the same function (resumed
    on the paths where its ``ckpt_path`` may be a checkpoint); ``NO`` where no ``fit`` call in the
    document may run on it, the Trainer is not handed to anything (only ``trainer.<attribute>``
    is ever read of its name) and its name is bound in the site's own scope (a global another
    module may fit first does not count); else ``UNKNOWN``. A ``fit`` of the same function that
    comes after the site or in the other branch of an ``if`` counts as not run only where this
    run of the function has a Trainer of its own (:func:`_fresh`): a second call of it may
    otherwise test what the first one fitted."""
    unknown = skipped = False
    for call in model.method_calls("fit"):
        if not _may_be(model, call, inst):
            continue
        if _dominates(model, call, site):
            return _resumed(model, call)
        if _after(model, call, site) or _exclusive(model, call, site):
            skipped = True
        else:
            unknown = True
    if unknown or not _kept(model, site) or not _local(model, site) or (skipped and not _fresh(model, site)):
        return [(Fitted.UNKNOWN, paths.EMPTY)]
    return [(Fitted.NO, paths.EMPTY)]


def _fresh(model: SemanticModel, site: ast.Call) -> bool:
    """Each run of the site's function binds its receiver to an object it makes: every binding of
    the name there is ``name = <call>(...)`` (``Trainer(...)``, a factory), or the scope is the
    module's, which runs once (``trainer = self.trainer`` is the same object at every call)."""
    assert isinstance(site.func, ast.Attribute) and isinstance(site.func.value, ast.Name)
    m = model.module
    scope = m.scope_of(site)
    if isinstance(scope, ast.Module):
        return True
    name = site.func.value.id
    for node in walk(scope):
        if (
            isinstance(node, ast.Name)
            and node.id == name
            and isinstance(node.ctx, ast.Store)
            and m.scope_of(node) is scope
        ):
            parent = m.parent_of(node)
            if not (isinstance(parent, ast.Assign) and isinstance(parent.value, ast.Call)):
                return False
    return True


def _may_be(model: SemanticModel, call: ast.Call, inst: TrainerInst) -> bool:
    assert isinstance(call.func, ast.Attribute)
    return any(
        isinstance(v, TrainerInst) and (v.origin is None or v.origin == inst.origin)
        for v in model.values(call.func.value)
    )


def _resumed(model: SemanticModel, call: ast.Call) -> list[tuple[Fitted, frozenset]]:
    """``fit(..., ckpt_path=x)``: RESUMED on the paths where ``x`` may be a checkpoint, YES where it
    is ``None`` (``ckpt_path = "last" if args.resume else None``); RESUMED where not known."""
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return [(Fitted.RESUMED, paths.EMPTY)]
    given = next(
        (k.value for k in call.keywords if k.arg == "ckpt_path"),
        call.args[_FIT_CKPT_INDEX] if len(call.args) > _FIT_CKPT_INDEX else None,
    )
    if given is None:
        return [(Fitted.YES, paths.EMPTY)]
    values = model.values(given)
    if not values:
        return [(Fitted.RESUMED, paths.EMPTY)]
    return [
        (Fitted.YES if isinstance(v, Const) and v.value is None else Fitted.RESUMED, paths.path_of(v)) for v in values
    ]


def _dominates(model: SemanticModel, call: ast.Call, site: ast.Call) -> bool:
    """``call`` is a whole statement (``trainer.fit(...)``, ``x = trainer.fit(...)``) of a block holding, after it, a statement
    the site is in, in the same scope, and not a call of a lambda or a comprehension."""
    m = model.module
    stmt = m.stmt_of(call)
    if (
        not isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign))
        or stmt.value is not call
        or m.scope_of(call) is not m.scope_of(site)
    ):
        return False
    _, block, index = m.block_of(stmt)
    cur: ast.AST | None = m.stmt_of(site)
    while cur is not None:
        if any(s is cur for s in block[index + 1 :]):
            return True
        cur = m.parent_of(cur)
    return False


def _after(model: SemanticModel, call: ast.Call, site: ast.Call) -> bool:
    """``call`` comes after the site in the same scope, with no loop around the site there."""
    m = model.module
    if m.scope_of(call) is not m.scope_of(site) or (call.lineno, call.col_offset) <= (site.lineno, site.col_offset):
        return False
    return not m.looped(site, m.scope_of(site))


def _exclusive(model: SemanticModel, call: ast.Call, site: ast.Call) -> bool:
    """``call`` and the site are in the two branches of one ``if`` of the same scope, with no loop
    around that ``if`` there (``if not args.test_only: trainer.fit(...)`` / ``else: trainer.test(...)``)."""
    m = model.module
    scope = m.scope_of(site)
    if m.scope_of(call) is not scope:
        return False
    child: ast.AST = site
    for cur in m.ancestors(site, scope):
        if isinstance(cur, ast.If) and cur.test is not child:
            other = cur.orelse if any(s is child for s in cur.body) else cur.body
            if any(call is s or any(a is s for a in m.ancestors(call, cur)) for s in other):
                return not m.looped(cur, scope)
        child = cur
    return False


def _kept(model: SemanticModel, site: ast.Call) -> bool:
    """The receiver is a name only ever read as ``name.<attribute>`` in the document: the Trainer is
    not passed to a function (which may call ``fit`` on it), stored or returned."""
    assert isinstance(site.func, ast.Attribute)
    receiver = site.func.value
    if not isinstance(receiver, ast.Name):
        return False
    tree = model.module.tree
    assert tree is not None
    parent_of = model.module.parent_of
    for n in ast.walk(tree):
        if (
            isinstance(n, ast.Name)
            and n.id == receiver.id
            and isinstance(n.ctx, ast.Load)
            and not isinstance(parent_of(n), ast.Attribute)
        ):
            return False
    return True


def _local(model: SemanticModel, site: ast.Call) -> bool:
    """The receiver's name is bound in the scope of the site (not ``global``/``nonlocal`` there)."""
    assert isinstance(site.func, ast.Attribute) and isinstance(site.func.value, ast.Name)
    name = site.func.value.id
    m = model.module
    scope = m.scope_of(site)
    bound = False
    for n in walk(scope):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return False
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and m.scope_of(n) is scope:
            bound = True
    return bound
