"""Answers asked once per analysis, with the look-ups they made replayed for every asker; and
answers about other modules, shared by the analyses of one workspace.

Rules ask the same questions at many sites (the value of a receiver, whether a call is a model
setup, which calls of the document are on a Fabric). Each is answered once per analysis; the
identifiers and statements the answer looked up in the document (and whether it read other
modules) are recorded again for every later site that asks, as if that site had computed the
answer itself — so incremental reuse (:mod:`fabric_lsp.engine.workspace.incremental`) stays exact. A question
whose working out ran out of evaluation steps is remembered as a :class:`Failure`: asked again in
the same analysis, it fails at once, its look-ups recorded for the asker. Worked out again with a
few more steps left, it would cost a whole budget again and run out again (litgpt's ``api.py``
worked one ``Fabric(...)``'s configurations out seven times, each time a few steps earlier in its
budget, ~4,000 steps each: a third of the file's analysis). One about another module's node that
looked nothing up in the analysed document is remembered in the workspace's :class:`SharedAnswers`
too, so that the other analyses that ask it with no more steps left fail at once as well.

A question about a node of *another* module (a ``Fabric(...)`` in a shared module, a parameter
of a helper there) is asked again by every analysis that reaches it. Its answer is kept in the
workspace's :class:`SharedAnswers` when it cannot depend on the asking analysis: it looked up
nothing in the analysed document, and no evaluation on the way was cut short by the recursion
guard of an evaluation around it (which depends on what the asker was evaluating). A later analysis that asks
replays the answer's look-ups (its dependencies for the cache, its external look-ups) and, asking
inside an evaluation, is charged the evaluation steps the answer cost, so that its budget runs out
as if it had worked the answer out itself (a question asked outside any evaluation, such as a
helper body's collectives, costs nothing: each evaluation it makes starts a budget of its own).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from fabric_lsp.engine.python import values
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.values import BudgetExceeded
from fabric_lsp.engine.workspace.dependencies import Recorder

T = TypeVar("T")
#: a cut replayed with an answer: the evaluations around the answer's first asker were cut
CUT_ELSEWHERE = ("cut elsewhere",)


@dataclass
class Answer:
    """One answer and what working it out did: the analysed document's identifiers it looked up,
    whether it read other modules, which evaluations around it cut one of its own short,
    and (for a shared answer) the workspace look-ups it recorded and the steps it took."""

    value: Any
    lookups: dict[str, set[str]]
    external: bool
    #: the evaluations under way around it that a recursion guard cut short on its way
    cut_by: frozenset = frozenset()
    recorded: Recorder | None = None
    steps: int = 0


@dataclass(frozen=True)
class Failure:
    """A question whose working out ran out of evaluation steps, having begun with ``steps``
    of its budget spent, and what it looked up on the way: asked again in the same analysis, it
    fails at once with the same look-ups; in another analysis (:class:`SharedAnswers`), where
    asked with at least as many steps spent (it costs the same there, and runs out again)."""

    steps: int
    lookups: dict[str, set[str]]
    external: bool
    recorded: Recorder | None = None


@dataclass
class SharedAnswers:
    """Answers about nodes of the workspace's modules, valid while the workspace announces no
    change (``epoch``). A key holds the node it asks about, so its ``id`` is never reused while
    the answer is kept."""

    epoch: int = -1
    answers: dict[Hashable, tuple[Any, Answer]] = field(default_factory=dict)
    #: questions that ran out of steps without looking anything up in their asker's document
    failures: dict[Hashable, tuple[Any, Failure]] = field(default_factory=dict)

    @staticmethod
    def of(workspace) -> SharedAnswers:
        """The store of ``workspace``, emptied when the workspace changed since it was filled."""
        store = _STORES.get(workspace)
        epoch = workspace.epoch_excluding(None)
        if store is None or store.epoch != epoch:
            store = _STORES[workspace] = SharedAnswers(epoch)
        return store


#: workspace → its shared answers (dropped with the workspace)
_STORES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class AskedOnce:
    def __init__(self, module: ModuleInfo, inference) -> None:
        self.module = module
        # the evaluator holds this memo too: a weak reference keeps the two out of a reference
        # cycle, so that a version's trees are freed as soon as the next one replaces them
        self._inference = weakref.ref(inference)
        self._answers: dict[Hashable, Answer] = {}
        self._failures: dict[Hashable, Failure] = {}

    def __call__(
        self,
        key: Hashable,
        compute: Callable[[], T],
        about: tuple[Any, ModuleInfo] | None = None,
        fits: Callable[[T], bool] | None = None,
    ) -> T:
        """The answer to ``key``, computed once per analysis. ``about``: the node the question is
        about and its module; a question about a node of another module than the analysed one
        may be answered from (and is offered to) the workspace's :class:`SharedAnswers`
        (``fits``: whether a shared answer holds for this asker too)."""
        hit = self._answers.get(key)
        if hit is None:
            shared = self._shared_store(about)
            self._fail_again(self._failures.get(key), whatever_the_steps=True)
            if shared is not None:
                found = shared.failures.get(key)
                self._fail_again(found[1] if found is not None else None)
            hit = self._from_shared(shared, key, fits) if shared is not None else None
            if hit is None:
                hit = self._computed(key, compute, shared, about)
                if shared is not None and key not in shared.answers and _shareable(hit):
                    shared.answers[key] = (about, hit)
            self._answers[key] = hit
        self._replay(hit)
        return hit.value

    def answered(self, key: Hashable) -> bool:
        """Whether this analysis already has the answer to ``key``."""
        return key in self._answers

    @property
    def inference(self):
        return self._inference()

    def _shared_store(self, about: tuple[Any, ModuleInfo] | None) -> SharedAnswers | None:
        workspace = self.inference.workspace
        if about is None or about[1] is self.module or workspace is None:
            return None
        return SharedAnswers.of(workspace)

    def _from_shared(self, shared: SharedAnswers, key: Hashable, fits: Callable | None) -> Answer | None:
        found = shared.answers.get(key)
        if found is None or (fits is not None and not fits(found[1].value)):
            return None
        answer = found[1]
        inference = self.inference
        _charge(inference.budget, answer.steps)  # what working it out would have cost here
        if answer.recorded is not None:
            _merge_into(inference.workspace._recorder(), answer.recorded)
        return answer

    def _fail_again(self, failure: Failure | None, whatever_the_steps: bool = False) -> None:
        """Raise as working the question out would, where it ran out of steps before
        (:class:`Failure`) with no more steps left than now — or ``whatever_the_steps``: in this
        analysis —, its look-ups recorded again."""
        inference = self.inference
        if failure is None or (not whatever_the_steps and inference.budget.steps < failure.steps):
            return
        self._replay_lookups(failure.lookups)
        if failure.external and inference.workspace is not None:
            inference.workspace.note_lookup()
        if failure.recorded is not None:
            _merge_into(inference.workspace._recorder(), failure.recorded)
        raise BudgetExceeded(steps=True)

    def _failed(self, key: Hashable, failure: Failure, shared: SharedAnswers | None, about) -> None:
        """Remember that ``key`` ran out of steps (for other analyses too, when it looked nothing
        up in this one's document)."""
        self._failures[key] = failure
        if shared is not None and not failure.lookups and failure.recorded is not None:
            shared.failures[key] = (about, failure)

    def _computed(
        self, key: Hashable, compute: Callable[[], T], shared: SharedAnswers | None = None, about=None
    ) -> Answer:
        outer = self.module.lookups
        inner: dict[str, set[str]] = {}
        self.module.lookups = inner
        inference = self.inference
        budget = inference.budget
        at_top = not budget.active  # asked outside any evaluation: each one it makes starts its own budget
        external_before, cuts_before, steps_before = inference.external_lookups, len(inference.cuts), budget.steps
        workspace = inference.workspace if shared is not None else None
        box: list[Recorder] = []  # the look-ups recorded, also when it raises
        try:
            if workspace is None:
                value = compute()
                recorded = None
            else:
                value, recorded = _recording(workspace, compute, box)
        except BaseException as exc:  # no answer to keep; what it looked up still counts
            self.module.lookups = outer
            self._replay_lookups(inner)
            if isinstance(exc, BudgetExceeded) and exc.steps and inference.budget is budget:
                external = inference.external_lookups != external_before
                self._failed(key, Failure(steps_before, inner, external, box[0] if box else None), shared, about)
            raise
        finally:
            self.module.lookups = outer
        # the guards still active are those of the evaluations around this one
        cut_by = frozenset(
            k for k in inference.cuts[cuts_before:] if k is CUT_ELSEWHERE or k in inference.budget.active
        )
        steps = budget.steps - steps_before
        if not at_top and inference.budget is not budget:  # an evaluation on the way started a budget of its own
            recorded = None
        return Answer(
            value, inner, inference.external_lookups != external_before, cut_by, recorded, 0 if at_top else steps
        )

    def _replay(self, answer: Answer) -> None:
        self._replay_lookups(answer.lookups)
        inference = self.inference
        if answer.cut_by:
            inference.cuts.append(CUT_ELSEWHERE)  # whatever holds this answer depends on its asker too
        if answer.external and inference.workspace is not None:
            inference.workspace.note_lookup()  # the answer's look-ups, replayed
        if answer.recorded is not None and inference.workspace is not None:
            # its workspace look-ups, for a question around it (a shared answer keeps them all)
            _merge_into(inference.workspace._recorder(), answer.recorded)

    def _replay_lookups(self, lookups: dict[str, set[str]]) -> None:
        if self.module.lookups is not None:
            for name, kinds in lookups.items():
                self.module.lookups.setdefault(name, set()).update(kinds)


def _shareable(answer: Answer) -> bool:
    return not answer.lookups and not answer.cut_by and answer.recorded is not None


def _recording(workspace, compute: Callable[[], T], box: list[Recorder]) -> tuple[T, Recorder]:
    """``compute()`` and the workspace look-ups it recorded (also put in ``box``, to be read
    when it raises), recorded for the analysis under way too (also when it raises)."""
    outer = workspace._recorder()
    try:
        with workspace.recording() as recorder:
            box.append(recorder)
            value = compute()
    finally:
        _merge_into(outer, recorder)
    return value, recorder


def _merge_into(target: Recorder | None, source: Recorder) -> None:
    if target is None or target is source:
        return
    target.paths |= source.paths
    target.missing |= source.missing
    target.mentions |= source.mentions
    target.listings |= source.listings


def _charge(budget, steps: int) -> None:
    """Spend ``steps`` of ``budget`` at once (raising as :meth:`Budget.tick` would)."""
    before = budget.steps
    budget.steps += steps
    past_check = budget.steps // 64 != before // 64  # tick() reads the clock every 64 steps
    if budget.steps > values.MAX_STEPS:
        raise BudgetExceeded(steps=True)
    if past_check and time.monotonic() > budget.deadline:
        raise BudgetExceeded()
