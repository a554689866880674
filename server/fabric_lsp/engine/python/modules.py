"""One parsed Python module with the indexes inference needs (parents, scopes, call sites)."""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Iterator
from functools import cached_property

from fabric_lsp.engine.findings import Span
from fabric_lsp.engine.python.astwalk import NODE_FIELDS, block_children, children, statements, walk
from fabric_lsp.engine.python.parse import Parsed, parse
from fabric_lsp.engine.python.text import identifiers as identifiers_in

SCOPE_TYPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
FUNC_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
#: Identifier sets of statement texts seen recently: an unchanged statement of a new version of
#: the document is not scanned again.
_IDENTIFIER_CACHE: dict[str, frozenset[str]] = {}
_IDENTIFIER_CACHE_SIZE = 20_000


_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]


def identifiers(text: str) -> frozenset[str]:
    """The identifiers (and keywords) a piece of source text holds."""
    cached = _IDENTIFIER_CACHE.get(text)
    if cached is None:
        if len(_IDENTIFIER_CACHE) >= _IDENTIFIER_CACHE_SIZE:
            _IDENTIFIER_CACHE.clear()
        cached = _IDENTIFIER_CACHE[text] = identifiers_in(text)
    return cached


class ModuleInfo:
    def __init__(self, text: str, path: str | None = None, name: str | None = None) -> None:
        self.text = text
        self.path = path
        self.name = name  # dotted module name when known
        self.parsed: Parsed = parse(text)
        self.tree = self.parsed.tree
        self.lines = self.parsed.lines
        self._scopes: dict[int, ast.AST] = {}
        self._bindings: dict[str, list] = {}
        self._parents: dict[ast.AST, ast.AST] = {}
        self._walked: set[int] = set()
        self._top_calls: dict[int, list[ast.Call]] = {}
        self._top_loads: dict[int, list[ast.Name]] = {}
        self._top_classes: dict[int, list[ast.ClassDef]] = {}
        #: the class statements the walk of a top-level statement met (in its own order)
        self._top_class_nodes: dict[int, list[ast.ClassDef]] = {}
        self._calls_cache: dict[str, list[ast.Call]] = {}
        self._calls_by_top_name: dict[int, dict[str, list[ast.Call]]] = {}
        self._globals: dict[ast.AST, set[str]] = {}
        #: while not None, every identifier looked up in :attr:`index` is added (the names one
        #: site's verdict depended on: see :mod:`fabric_lsp.engine.workspace.incremental`)
        #: name → how it was looked up: "binding" (only the statements that bind it mattered),
        #: "global" (those that also say ``global``), "mention" (every one that mentions it)
        self.lookups: dict[str, set[str]] | None = None
        self._local_names: dict[ast.AST, set[str]] = {}
        self._mentions: dict[str, tuple[list[ast.stmt], list[int]]] = {}
        #: id(function) → (function, attribute name → its assignments): see :meth:`attribute_assignments`
        self._attr_assignments: dict[int, tuple[ast.AST, dict[str, list[tuple[ast.stmt, ast.AST, ast.AST]]]]] = {}
        #: id(test) → (test, id of its scope, its text): the part of a test's decision its own
        #: text decides (see :func:`fabric_lsp.engine.python.conditions.decision`)
        self.decision_keys: dict[int, tuple[ast.AST, int, str]] = {}
        #: (id(node), node types) → (node, the nodes of those types within it): see :meth:`walked`
        self._walked_kinds: dict[tuple[int, tuple], tuple[ast.AST, list[ast.AST]]] = {}
        #: identifier → the ``Name`` loads and ``Attribute`` nodes using it, for the names asked so far
        self._references: dict[str, list[ast.AST]] = {}
        #: id(module-level statement) → (it, its references by name): see :meth:`_top_references`
        self._references_by_top: dict[int, tuple[ast.stmt, dict[str, list[tuple[int, ast.AST]]]]] = {}
        #: name → the functions that declare ``global name`` (None until built): see :meth:`global_declarers`
        self._global_declarers: dict[str, list[ast.AST]] | None = None
        #: id(node) → (node, its span, its text): see :meth:`span` and :meth:`segment`
        self._texts: dict[int, list] = {}
        #: (name, id(use statement), id(scope)) → the bindings of ``name`` that reach the use, and
        #: what walking to them cost: see :meth:`fabric_lsp.engine.program.infer.Inference.reaching`
        self.reaching_walks: dict[tuple, tuple] = {}
        #: ("test", id(test), truth) → (test, whether the test going that way leaves some ranks
        #: out); ("statement", id(stmt)) → (stmt, the innermost such condition it is reached
        #: under): see :func:`fabric_lsp.engine.program.ranks.rank_guard`
        self.rank_tests: dict[tuple, tuple] = {}
        if self.tree is not None:
            for stmt in self.tree.body:
                self._parents[stmt] = self.tree

    # -- indexes -----------------------------------------------------------------------------
    # Indexes are lazy and text-guided: a regular expression finds the lines that can matter
    # (a call named ``setup_optimizers`` …), and only the top-level statements holding those
    # lines are walked. A 50,000-line file with one training function costs one parse.

    @cached_property
    def _tops(self) -> tuple[list[int], list[int], list[ast.stmt]]:
        body = self.tree.body if self.tree is not None else []
        starts = [min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])]) for s in body]
        ends = [s.end_lineno or s.lineno for s in body]
        return starts, ends, body

    def top_for_line(self, lineno: int) -> ast.stmt | None:
        """The module-level statement spanning 1-based ``lineno``."""
        starts, ends, body = self._tops
        i = bisect.bisect_right(starts, lineno) - 1
        if 0 <= i < len(body) and ends[i] >= lineno:
            return body[i]
        return None

    def _walk_top(self, top: ast.stmt) -> None:
        if id(top) in self._walked:
            return
        self._walked.add(id(top))
        parents = self._parents
        calls: list[ast.Call] = []
        loads: list[ast.Name] = []
        classes: list[ast.ClassDef] = []
        stack: list[ast.AST] = [top]
        pop, push = stack.pop, stack.append
        fields = NODE_FIELDS
        # astwalk.children, inlined (the walk of every statement an analysis reads: a
        # generator per node made it the largest cost of a keystroke). A name's only child is
        # its context (Load/Store), which needs no parent.
        while stack:
            node = pop()
            kind = type(node)
            if kind is ast.Call:
                calls.append(node)
            elif kind is ast.ClassDef:
                classes.append(node)
            elif kind is ast.Name:
                if type(node.ctx) is ast.Load:
                    loads.append(node)
                continue
            for field in fields[kind]:
                value = getattr(node, field, None)
                if type(value) is list:
                    for child in value:
                        if child is not None:
                            parents[child] = node
                            push(child)
                elif value is not None:
                    parents[value] = node
                    push(value)
        self._top_calls[id(top)] = calls
        self._top_loads[id(top)] = loads
        self._top_class_nodes[id(top)] = classes

    @cached_property
    def top_texts(self) -> list[str]:
        """The exact text of each module-level statement (decorators included), in order."""
        starts, ends, _ = self._tops
        lines = self.lines
        # the text the tree was built from: a statement that a repair replaced reads as such
        # (repairs keep every line's length in lines, not in characters: use its own offsets)
        source = self.parsed.repaired if self.parsed.repaired is not None else self.text
        offsets = lines.starts if source is self.text else _line_starts(source)
        out = []
        for s, e in zip(starts, ends):
            begin = offsets[s - 1] if s - 1 < len(offsets) else len(source)
            end = offsets[e] if e < len(offsets) else len(source)
            out.append(source[begin:end])
        return out

    @cached_property
    def index(self) -> dict[str, tuple[int, ...]]:
        """Identifier → indexes (in document order) of the module-level statements whose text
        holds it. Built once per parse, in one pass over the text: a look-up is a dict access,
        so the cost of an analysis grows with the size of the file, not with its square.
        Words in strings and comments count too (a superset: callers check the tree)."""
        found: dict[str, list[int]] = {}
        for i, text in enumerate(self.top_texts):
            for name in identifiers(text):
                found.setdefault(name, []).append(i)
        return {name: tuple(ids) for name, ids in found.items()}

    @cached_property
    def top_keys(self) -> list[tuple[int, int]]:
        """A key per module-level statement that survives edits elsewhere: the hash of its text
        and how many identical statements come before it."""
        seen: dict[int, int] = {}
        keys = []
        for text in self.top_texts:
            h = hash(text)
            seen[h] = seen.get(h, -1) + 1
            keys.append((h, seen[h]))
        return keys

    def top_index(self, stmt: ast.stmt) -> int:
        starts, _, body = self._tops
        i = bisect.bisect_right(starts, stmt.lineno) - 1
        while i > 0 and body[i] is not stmt:
            i -= 1
        return i

    def record_lookup(self, name: str, kind: str = "mention") -> None:
        """Record that the verdict being computed depends on the statements that mention
        ``name`` (or, for ``kind="binding"``, bind it), as :meth:`tops_with` does."""
        if self.lookups is not None:
            self.lookups.setdefault(name, set()).add(kind)

    def _record_statement(self, top: ast.stmt) -> None:
        """The verdict being computed read inside the module-level statement ``top`` only: it
        depends on that statement's text (see :data:`STATEMENTS`)."""
        if self.lookups is not None:
            key = self.top_keys[self.top_index(top)]
            self.lookups.setdefault(STATEMENTS, set()).add(f"{key[0]}:{key[1]}")

    def calls_within(self, node: ast.AST, name: str) -> list[ast.Call]:
        """Calls named ``name`` (``f(...)``, ``x.f(...)``) inside ``node`` (a function or class),
        in order. Only the module-level statement holding ``node`` is read, and the look-up is
        recorded as a dependency on that statement alone — not on every statement that
        mentions ``name``, as :meth:`calls_named` is."""
        top = self.top_for_line(getattr(node, "lineno", 0)) if not isinstance(node, ast.Module) else None
        if top is None:
            return [c for c in self.calls_named(name) if _inside(c, node)]
        self._record_statement(top)
        self._walk_top(top)
        out = [c for c in self._top_calls[id(top)] if callee_name(c) == name and _inside(c, node)]
        out.sort(key=lambda c: (c.lineno, c.col_offset))
        return out

    def tops_with(self, name: str, kind: str = "mention") -> list[ast.stmt]:
        """The module-level statements that mention the identifier ``name``, in order. ``kind``
        tells what the caller reads of them: ``"binding"`` when only those that bind the name at
        module level matter (name resolution), ``"mention"`` otherwise (call sites, uses)."""
        self.record_lookup(name, kind)
        return list(self._tops_with(name)[0])

    def _tops_with(self, name: str) -> tuple[list[ast.stmt], list[int]]:
        """The statements mentioning ``name`` and their first lines, found once per name."""
        found = self._mentions.get(name)
        if found is None:
            body = self._tops[2]
            tops = [body[i] for i in self.index.get(name, ())]
            found = self._mentions[name] = (tops, [t.lineno for t in tops])
        return found

    def module_bindings(self, name: str, bindings_of) -> list:
        """The module-level bindings of ``name`` (``bindings_of(tops, name)``, from the statements
        that mention it), found once per module: a name like an import alias is looked up at
        every site."""
        self.record_lookup(name, "binding")  # at every look-up, as a scan would be
        found = self._bindings.get(name)
        if found is None:
            found = self._bindings[name] = bindings_of(self._tops_with(name)[0], name)[0]
        return list(found)

    def tops_declaring_global(self, name: str) -> list[ast.stmt]:
        """The module-level statements that mention ``global`` and ``name`` (functions that may
        assign the module's ``name``)."""
        self.record_lookup(name, "global")
        if "global" not in self.index:
            return []
        common = set(self.index["global"]) & set(self.index.get(name, ()))
        body = self._tops[2]
        return [body[i] for i in sorted(common)]

    def tops_before(self, name: str, stmt: ast.stmt) -> tuple[list[ast.stmt], int]:
        """The module-level statements mentioning ``name``, and how many come before ``stmt``
        (for the bindings of ``name`` that reach ``stmt``)."""
        self.record_lookup(name, "binding")
        tops, lines = self._tops_with(name)
        return list(tops), bisect.bisect_left(lines, stmt.lineno)

    def calls_named(self, name: str) -> list[ast.Call]:
        """Call nodes whose callee's last name is ``name`` (``f(...)`` and ``x.f(...)``)."""
        self.record_lookup(name, "mention")
        cached = self._calls_cache.get(name)
        if cached is not None:
            return cached
        out: list[ast.Call] = []
        if self.tree is not None:
            for top in self.tops_with(name):
                out += self._top_calls_named(top).get(name, ())
        out.sort(key=lambda c: (c.lineno, c.col_offset))
        self._calls_cache[name] = out
        return out

    def calls_named_like(self, wanted: Callable[[str], bool]) -> list[ast.Call]:
        """Calls whose callee's last name ``wanted`` accepts (``...Trainer(...)``, ``...CLI(...)``),
        in order: found through the index of the module's words, not a walk of its tree."""
        found = [c for name in self.index if wanted(name) for c in self.calls_named(name)]
        return sorted(found, key=lambda c: (c.lineno, c.col_offset))

    def calls_in(self, top: ast.stmt) -> list[ast.Call]:
        """Every call inside the module-level statement ``top`` (walked once per version)."""
        self._walk_top(top)
        return self._top_calls[id(top)]

    def calls_in_statements_mentioning(self, name: str, word: str) -> list[ast.Call]:
        """Calls named ``name`` in the module-level statements that mention ``word``, in order:
        for calls whose text must hold ``word`` (``x.launch(train)`` among the callers of
        ``train``). Recorded as a look-up of ``word`` alone — the calls can be in no other
        statement."""
        out: list[ast.Call] = []
        for top in self.tops_with(word):
            out += self._top_calls_named(top).get(name, ())
        out.sort(key=lambda c: (c.lineno, c.col_offset))
        return out

    def _top_calls_named(self, top: ast.stmt) -> dict[str, list[ast.Call]]:
        """The calls inside the module-level statement ``top`` by the name they call (once per
        statement: the call sites of every function ask about the statements naming it)."""
        found = self._calls_by_top_name.get(id(top))
        if found is None:
            self._walk_top(top)
            found = {}
            for call in self._top_calls[id(top)]:
                name = callee_name(call)
                if name is not None:
                    found.setdefault(name, []).append(call)
            self._calls_by_top_name[id(top)] = found
        return found

    def loads_of(self, name: str) -> list[ast.Name]:
        """``Name`` nodes that read ``name``."""
        out: list[ast.Name] = []
        if self.tree is not None:
            for top in self.tops_with(name):
                self._walk_top(top)
                out += [n for n in self._top_loads[id(top)] if n.id == name]
        return out

    def classes(self) -> list[ast.ClassDef]:
        out: list[ast.ClassDef] = []
        if self.tree is not None:
            for top in self.tops_with("class"):
                found = self._top_classes.get(id(top))
                if found is None:  # found once per statement: the evaluator asks at every `self.<attr>`
                    self._walk_top(top)
                    found = self._top_class_nodes[id(top)]
                    if len(found) > 1:  # nested classes: in ast.walk's order, as they always were
                        found = [n for n in walk(top) if isinstance(n, ast.ClassDef)]
                    self._top_classes[id(top)] = found
                out += found
        return out

    def attribute_assignments(self, func: ast.AST) -> dict[str, list[tuple[ast.stmt, ast.AST, ast.AST]]]:
        """Attribute name → (statement, target, value) of the assignments with a value inside
        ``func`` (a node of this module) whose target holds an attribute of that name
        (``self.attr = …``, ``self.a, b = …``), in the order :func:`ast.walk` meets them: one
        walk per function, however many attributes are asked of it."""
        known = self._attr_assignments.get(id(func))
        if known is not None and known[0] is func:
            return known[1]
        index: dict[str, list[tuple[ast.stmt, ast.AST, ast.AST]]] = {}
        for node in statements(func):
            if isinstance(node, ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                pairs = [(node.target, node.value)]
            else:
                continue
            for target, value in pairs:
                for attr in dict.fromkeys(_target_attributes(target)):
                    index.setdefault(attr, []).append((node, target, value))
        self._attr_assignments[id(func)] = (func, index)
        return index

    def global_declarers(self, name: str) -> list[ast.AST]:
        """The functions that declare ``global name`` in their own body, in the order walking
        the module-level statements that mention ``global`` meets them (recorded as the look-up
        :meth:`tops_declaring_global` is). Found for every name by one walk of those statements."""
        self.record_lookup(name, "global")
        if self._global_declarers is None:
            found: dict[str, list[ast.AST]] = {}
            body = self._tops[2]
            for i in self.index.get("global", ()):
                for func in walk(body[i]):
                    if not isinstance(func, FUNC_TYPES):
                        continue
                    names = [n for g in func.body if isinstance(g, ast.Global) for n in g.names]
                    for declared in dict.fromkeys(names):
                        found.setdefault(declared, []).append(func)
            self._global_declarers = found
        return list(self._global_declarers.get(name, ()))

    def walked(self, node: ast.AST, kinds: tuple[type, ...]) -> list[ast.AST]:
        """The nodes of the types ``kinds`` within ``node`` (itself included), in the order
        :func:`ast.walk` meets them: one walk per node and set of types, however often asked."""
        key = (id(node), kinds)
        known = self._walked_kinds.get(key)
        if known is None or known[0] is not node:
            known = self._walked_kinds[key] = (node, [n for n in walk(node) if isinstance(n, kinds)])
        return known[1]

    def references(self, name: str) -> list[ast.AST]:
        """The ``Name`` nodes that read ``name`` and the ``Attribute`` nodes ``<x>.name`` of the
        whole module, in the order :func:`ast.walk` meets them, found once per name in the
        module-level statements whose text holds it. That walk meets the nodes one depth at a
        time, each depth statement by statement: ordering each statement's own breadth-first
        matches by depth (a stable sort) gives its order."""
        found = self._references.get(name)
        if found is None:
            matches: list[tuple[int, ast.AST]] = []
            for top in self._tops_with(name)[0]:
                matches += self._top_references(top).get(name, ())
            matches.sort(key=lambda m: m[0])
            found = self._references[name] = [n for _, n in matches]
        return found

    def _top_references(self, top: ast.stmt) -> dict[str, list[tuple[int, ast.AST]]]:
        """The ``Name`` loads and ``Attribute`` nodes of the module-level statement ``top`` by the
        name they use, each with its depth, in breadth-first order: walked once per statement (a
        large statement mentions many of the names asked about)."""
        known = self._references_by_top.get(id(top))
        if known is None or known[0] is not top:
            found: dict[str, list[tuple[int, ast.AST]]] = {}
            level: list[ast.AST] = [top]
            depth = 0
            while level:
                for n in level:
                    used = _reference_name(n)
                    if used is not None:
                        found.setdefault(used, []).append((depth, n))
                level, depth = [c for n in level for c in children(n)], depth + 1
            known = self._references_by_top[id(top)] = (top, found)
        return known[1]

    @property
    def calls_by_name(self) -> _ByName:
        return _ByName(self.calls_named)

    @property
    def name_loads(self) -> _ByName:
        return _ByName(self.loads_of)

    def parent_of(self, node: ast.AST, default=None):
        """The parent of ``node``, found by walking only the top-level statement that holds it."""
        parent = self._parents.get(node)
        if parent is not None:
            return parent
        lineno = getattr(node, "lineno", None)
        if lineno is None or self.tree is None:
            return default
        top = self.top_for_line(lineno)
        if top is None or id(top) in self._walked:
            return default
        self._walk_top(top)
        return self._parents.get(node, default)

    # -- navigation --------------------------------------------------------------------------
    def scope_of(self, node: ast.AST) -> ast.AST:
        """The function, class, lambda or module whose namespace ``node`` is evaluated in
        (remembered per node: rules ask it of the same calls at every site)."""
        scope = self._scopes.get(id(node))
        if scope is None:
            scope = self._scopes[id(node)] = self._scope_of(node)
        return scope

    def _scope_of(self, node: ast.AST) -> ast.AST:
        child = node
        cur = self.parent_of(node)
        while cur is not None:
            if isinstance(cur, SCOPE_TYPES):
                # a function's decorators, defaults and annotations belong to the outer scope
                if isinstance(cur, (*FUNC_TYPES, ast.Lambda)) and child is not cur:
                    if (
                        child in getattr(cur, "decorator_list", ())
                        or child is getattr(cur, "returns", None)
                        or child is cur.args
                    ):
                        pass
                    else:
                        return cur
                elif isinstance(cur, ast.ClassDef):
                    if child in cur.body:
                        return cur
                else:
                    return cur
            child = cur
            cur = self.parent_of(cur)
        assert self.tree is not None  # a node was found, so the module parsed
        return self.tree

    def stmt_of(self, node: ast.AST) -> ast.stmt | None:
        cur: ast.AST | None = node
        while cur is not None and not isinstance(cur, ast.stmt):
            cur = self.parent_of(cur)
        return cur

    def block_of(self, stmt: ast.AST) -> tuple[ast.AST | None, list, int]:
        """(parent node, the statement list holding ``stmt``, its index)."""
        parent = self.parent_of(stmt)
        if parent is None:
            return None, [], -1
        for field in _BLOCK_FIELDS:
            block = getattr(parent, field, None)
            if isinstance(block, list):
                for i, item in enumerate(block):
                    if item is stmt:
                        return parent, block, i
        return parent, [], -1

    def ancestors(self, node: ast.AST, upto: ast.AST) -> Iterator[ast.AST]:
        """The nodes enclosing ``node``, innermost first, up to (not including) ``upto``."""
        cur = self.parent_of(node)
        while cur is not None and cur is not upto:
            yield cur
            cur = self.parent_of(cur)

    def looped(self, node: ast.AST, scope: ast.AST, around: ast.AST | None = None) -> bool:
        """Whether a loop of ``scope`` may run ``node`` again (a loop that does not also hold ``around``)."""
        return any(
            isinstance(a, _LOOPS) and (around is None or not _inside(around, a)) for a in self.ancestors(node, scope)
        )

    def enclosing_class(self, func: ast.AST) -> ast.ClassDef | None:
        parent = self.parent_of(func)
        return parent if isinstance(parent, ast.ClassDef) else None

    def local_names(self, scope: ast.AST) -> set[str]:
        """Names bound in ``scope`` (its parameters and assignments), minus ``global``/``nonlocal``."""
        cache = self._local_names
        if scope in cache:
            return cache[scope]
        key = self._text_key(scope)
        known = _SCOPE_NAMES.get(key) if key is not None else None
        if known is not None:
            cache[scope], self._globals[scope] = known
            return known[0]
        result, globals_ = _scope_names(scope, statements_only=not self.binds_in_expressions)
        cache[scope] = result
        self._globals[scope] = globals_
        if key is not None:
            if len(_SCOPE_NAMES) >= MAX_SCOPE_NAMES:
                _SCOPE_NAMES.clear()
            _SCOPE_NAMES[key] = (result, globals_)
        return result

    @cached_property
    def binds_in_expressions(self) -> bool:
        """Whether the parsed text may hold an assignment expression (``:=``): where it does not,
        no expression binds a name, and what a scope binds is found in its statements alone."""
        repaired = self.parsed.repaired
        return ":=" in self.text or (repaired is not None and ":=" in repaired)

    def _text_key(self, node: ast.AST) -> tuple | None:
        """A key for ``node`` that holds in every version of any document where the module-level
        statement around it has the same text: that text's hash and ``node``'s place in it."""
        lineno: int | None = getattr(node, "lineno", None)
        top = self.top_for_line(lineno) if lineno is not None else None
        if top is None or lineno is None:
            return None
        i = self.top_index(top)
        return (self.top_keys[i][0], lineno - self._tops[0][i], getattr(node, "col_offset", 0), type(node).__name__)

    def declared_global(self, scope: ast.AST, name: str) -> bool:
        """Whether ``scope`` itself declares ``global name`` (found by the same walk as
        :meth:`local_names`)."""
        if scope not in self._globals:
            self.local_names(scope)
        return name in self._globals.get(scope, ())

    def span(self, node: ast.AST) -> Span:
        """The node's range, worked out once per node (the evaluator asks it of every constant and
        binding it reaches, at every site)."""
        return self._text_entry(node)[2]

    def segment(self, node: ast.AST) -> str:
        """The node's source text, worked out once per node."""
        entry = self._text_entry(node)
        if entry[3] is None:
            lines = self.lines
            entry[3] = lines.text[lines.offset(entry[2].start) : lines.offset(entry[2].end)]
        return entry[3]

    def _text_entry(self, node: ast.AST) -> list:
        """[node, its location, its span, its text or None], kept per node (a node whose location
        was changed since is worked out again)."""
        where = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        entry = self._texts.get(id(node))
        if entry is None or entry[0] is not node or entry[1] != where:
            entry = self._texts[id(node)] = [
                node,
                where,
                Span(self.lines.node_start(node), self.lines.node_end(node)),
                None,
            ]
        return entry


def _parameters(scope: ast.AST) -> set[str]:
    """The names of a function's (or a lambda's) parameters; none for another scope."""
    if not isinstance(scope, (*FUNC_TYPES, ast.Lambda)):
        return set()
    a = scope.args
    return {arg.arg for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if arg is not None}


def _scope_names(scope: ast.AST, statements_only: bool = False) -> tuple[set[str], set[str]]:
    """The names ``scope`` binds (parameters, assignments, imports, definitions) minus those it
    declares ``global``/``nonlocal``, and those it declares ``global``: one walk of its body.
    ``statements_only`` (its module holds no assignment expression, so no expression binds a name):
    the names its statements bind (their targets, definitions, imports, handlers), without walking
    an expression — the same sets, in a fraction of the time."""
    if not isinstance(scope.body, list):  # a lambda: its body is an expression
        statements_only = False
    bound = _parameters(scope)
    declared: set[str] = set()
    globals_: set[str] = set()
    stack = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
            if isinstance(node, ast.Global):
                globals_.update(node.names)
        elif isinstance(node, (*FUNC_TYPES, ast.ClassDef)):
            bound.add(node.name)
            if not statements_only:
                stack.extend(node.decorator_list)
            continue
        elif isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        if statements_only:
            for target in _targets(node):
                bound.update(_stored_names(target))
            stack.extend(block_children(node))
        else:
            stack.extend(children(node))
    return bound - declared, globals_


def _targets(stmt: ast.AST) -> list[ast.AST]:
    """The expressions a statement assigns or deletes."""
    if isinstance(stmt, (ast.Assign, ast.Delete)):
        return list(stmt.targets)
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        return [stmt.target]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    return []


def _stored_names(target: ast.AST) -> list[str]:
    """The names an assignment target stores or deletes (not those inside a lambda or a
    comprehension in it, which bind their own)."""
    out: list[str] = []
    stack = [target]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                out.append(node.id)
        elif not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack.extend(children(node))
    return out


#: (text hash of a module-level statement, line and column of a scope in it, its type) →
#: (local names, globals) of the scope: facts its own text decides, kept across versions (an
#: edit elsewhere re-parses the document; the functions it did not touch are not walked again)
_SCOPE_NAMES: dict[tuple, tuple[set[str], set[str]]] = {}
MAX_SCOPE_NAMES = 50_000

#: the look-up key under which a verdict records the module-level statements it read by
#: position (their keys, "hash:occurrence"), not by the identifiers they mention
STATEMENTS = "<statements>"


def _target_attributes(target: ast.AST) -> list[str]:
    """The names of the attributes an assignment target assigns (``x.a``, and those in a tuple
    or list of targets, as :func:`~fabric_lsp.engine.python.bindings.attr_target_value` reads it)."""
    if isinstance(target, ast.Attribute):
        return [target.attr]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [a for t in target.elts for a in _target_attributes(t)]
    return []


def decorated_with(func: ast.AST, name: str) -> bool:
    """Whether ``func`` carries the plain decorator ``@name`` (``staticmethod``, ``classmethod``)."""
    return any(isinstance(d, ast.Name) and d.id == name for d in getattr(func, "decorator_list", ()))


def method_receiver(func: ast.AST) -> tuple[str, bool] | None:
    """For a function defined in a class body: the parameter it receives its instance in (or, for
    a ``classmethod``, its class: the flag), or None (a ``staticmethod``, no parameter)."""
    params = [*func.args.posonlyargs, *func.args.args]
    if not params or decorated_with(func, "staticmethod"):
        return None
    return params[0].arg, decorated_with(func, "classmethod")


def _reference_name(node: ast.AST) -> str | None:
    """The name a ``Name`` load or an attribute ``<x>.name`` uses; None for any other node."""
    if isinstance(node, ast.Name):
        return node.id if isinstance(node.ctx, ast.Load) else None
    return node.attr if isinstance(node, ast.Attribute) else None


def last_name(node: ast.AST) -> str | None:
    """The last name of a name or attribute expression (``f`` of ``f`` and ``x.f``), if it is one."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def callee_name(call: ast.Call) -> str | None:
    """The last name of what ``call`` calls (``f(...)`` and ``x.f(...)``), if it is a name."""
    return last_name(call.func)


def _inside(inner: ast.AST, outer: ast.AST) -> bool:
    """Whether ``inner`` lies within ``outer``'s lines and columns (both from one parse)."""
    if isinstance(outer, ast.Module):
        return True
    start = (getattr(outer, "lineno", 0), getattr(outer, "col_offset", 0))
    end = (getattr(outer, "end_lineno", 0) or 0, getattr(outer, "end_col_offset", 0) or 0)
    here = (getattr(inner, "lineno", 0), getattr(inner, "col_offset", 0))
    return start <= here and (getattr(inner, "end_lineno", 0) or 0, getattr(inner, "end_col_offset", 0) or 0) <= end


class _ByName:
    """``index.get(name, default)`` over a look-up function (keeps the dict-like call sites)."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def get(self, name: str, default=None):
        found = self.fn(name)
        return found if found else (default if default is not None else [])
