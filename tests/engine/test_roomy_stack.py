"""The analysis runs on a roomy stack: from Python 3.11 a call that crosses into the next 16 KiB
chunk of frame memory maps it, and its return unmaps it; the evaluator's recursion, going up and
down across a chunk's edge, did so thousands of times a file (each mapping faults its pages in)."""

from __future__ import annotations

import resource
import sys

import pytest
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.analyzer import _roomy, on_roomy_stack
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE


def _oscillate(depth: int) -> int:
    """Recursion that goes ``depth`` calls deep and back, 300 times: ~60 KiB of frames each way."""

    def down(n: int) -> int:
        return 0 if n == 0 else 1 + down(n - 1)

    return sum(down(depth) for _ in range(300))


def _faults(fn) -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    fn()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.mark.skipif(sys.version_info < (3, 11), reason="frames are objects of their own before Python 3.11")
def test_recursion_on_the_roomy_stack_maps_no_chunk_again_and_again():
    # outside, this faults ~4,500 pages in (Python 3.11); inside, the frames stay in one mapped chunk
    assert on_roomy_stack(lambda: (_oscillate(600), _faults(lambda: _oscillate(600)))[1]) < 50
    assert on_roomy_stack(lambda: 42) == 42


def test_an_analysis_runs_on_the_roomy_stack(monkeypatch):
    rule = RULES_BY_CODE["FAB001"]
    seen: list[bool] = []
    real = type(rule).verdict

    def verdict(self, model, site, ctx):
        frame, codes = sys._getframe(), set()
        while frame is not None:
            codes.add(frame.f_code)
            frame = frame.f_back
        seen.append(_roomy.__code__ in codes)
        return real(self, model, site, ctx)

    monkeypatch.setattr(type(rule), "verdict", verdict)
    text = "from lightning.fabric import Fabric\nfabric = Fabric(strategy='deepspeed')\nfabric.setup_module(m)\nfabric.setup_optimizers(o)\n"
    findings = Analyzer(Workspace(), [rule]).analyze(text, "train.py")
    assert seen and all(seen) and [f.code for f in findings] == ["FAB001"]
