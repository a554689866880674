"""Answers asked once per analysis, with the look-ups they made replayed for every asker.

Rules ask the same questions at many sites (the value of a receiver, whether a call is a model
setup, which calls of the document are on a Fabric). Each is answered once per analysis; the
identifiers and statements the answer looked up in the document (and whether it read other
modules) are recorded again for every later site that asks, as if that site had computed the
answer itself — so incremental reuse (:mod:`fabric_lsp.engine.workspace.incremental`) stays exact.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable
from typing import Any, Callable, TypeVar

from fabric_lsp.engine.python.modules import ModuleInfo

T = TypeVar("T")


class AskedOnce:
    def __init__(self, module: ModuleInfo, inference) -> None:
        self.module = module
        # the evaluator holds this memo too: a weak reference keeps the two out of a reference
        # cycle, so that a version's trees are freed as soon as the next one replaces them
        self._inference = weakref.ref(inference)
        self._answers: dict[Hashable, tuple[Any, dict[str, set[str]], bool]] = {}

    def __call__(self, key: Hashable, compute: Callable[[], T]) -> T:
        hit = self._answers.get(key)
        if hit is None:
            outer = self.module.lookups
            inner: dict[str, set[str]] = {}
            self.module.lookups = inner
            inference = self.inference
            external_before = inference.external_lookups
            try:
                answer = compute()
            except BaseException:  # no answer to keep; what it looked up still counts
                self.module.lookups = outer
                self._replay(inner)
                raise
            self.module.lookups = outer
            hit = (answer, inner, inference.external_lookups != external_before)
            self._answers[key] = hit
        answer, lookups, external = hit
        self._replay(lookups)
        if external and self.inference.workspace is not None:
            self.inference.workspace.note_lookup()  # the answer's look-ups, replayed
        return answer

    @property
    def inference(self):
        return self._inference()

    def _replay(self, lookups: dict[str, set[str]]) -> None:
        if self.module.lookups is not None:
            for name, kinds in lookups.items():
                self.module.lookups.setdefault(name, set()).update(kinds)
