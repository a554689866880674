"""FAB006 beyond its documented examples: the forms it must and must not report."""

from __future__ import annotations

import textwrap

import pytest
from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

HEAD = "from lightning.fabric import Fabric\n"


def findings(src: str):
    analyzer = Analyzer(Workspace(), [RULES_BY_CODE["FAB006"]])
    return analyzer.analyze(HEAD + textwrap.dedent(src).lstrip("\n"))


REPORTED = {
    "swapped, names bound to a dict and a string (no fix)": (
        """
        fabric = Fabric()
        state = {"model": model}
        path = "ckpt.pt"
        fabric.save(state, path)
        """,
        Severity.ERROR,
    ),
    "filter value not callable": (
        """
        fabric = Fabric()
        fabric.save("c.pt", {"model": model}, filter={"model": True})
        """,
        Severity.ERROR,
    ),
    "filter under ModelParallel with distributed checkpoints (the default)": (
        """
        from lightning.fabric.strategies import ModelParallelStrategy
        fabric = Fabric(strategy=ModelParallelStrategy(parallelize))
        fabric.launch()
        model = fabric.setup(model)
        fabric.save("c", {"model": model}, filter={"model": keep})
        """,
        Severity.ERROR,
    ),
    "load_raw of a module under XLAFSDP": (
        """
        fabric = Fabric(strategy="xla_fsdp", accelerator="tpu")
        fabric.launch(main)
        def main(fabric):
            model = fabric.setup_module(model)
            fabric.load_raw("w.pt", model)
        """,
        Severity.ERROR,
    ),
    "load with only metadata under DeepSpeed": (
        """
        fabric = Fabric(strategy="deepspeed_stage_3")
        fabric.launch()
        model, opt = fabric.setup(model, opt)
        fabric.load("ckpt", {"step": 0})
        """,
        Severity.ERROR,
    ),
    "load_raw of an optimizer from setup_optimizers under FSDP": (
        """
        fabric = Fabric(strategy="fsdp")
        fabric.launch()
        model = fabric.setup_module(model)
        opt = fabric.setup_optimizers(opt)
        fabric.load_raw("opt.pt", opt)
        """,
        Severity.ERROR,
    ),
}

SILENT = {
    "filter under ModelParallel with full checkpoints": """
        from lightning.fabric.strategies import ModelParallelStrategy
        fabric = Fabric(strategy=ModelParallelStrategy(parallelize, save_distributed_checkpoint=False))
        fabric.launch()
        model = fabric.setup(model)
        fabric.save("c.pt", {"model": model}, filter={"model": keep})
        """,
    "load(path) under DeepSpeed ZeRO-3 with load_full_weights": """
        from lightning.fabric.strategies import DeepSpeedStrategy
        fabric = Fabric(strategy=DeepSpeedStrategy(stage=3, load_full_weights=True))
        fabric.launch()
        model, opt = fabric.setup(model, opt)
        ckpt = fabric.load("full.pt")
        """,
    "filter= None": """
        fabric = Fabric(strategy="deepspeed")
        fabric.launch()
        model, opt = fabric.setup(model, opt)
        fabric.save("c", {"model": model, "optimizer": opt}, filter=None)
        """,
    "a state of unknown values under FSDP": """
        fabric = Fabric(strategy="fsdp")
        fabric.launch()
        model, opt = fabric.setup(model, opt)
        fabric.save("c", {"model": get_model(), "step": 1})
        """,
    "save on something that is not a Fabric": """
        import torch
        torch.save(model.state_dict(), "m.pt")
        accelerator.save(model.state_dict(), "m.pt")
        """,
    "load(path) under the default strategy": """
        fabric = Fabric()
        ckpt = fabric.load("c.pt")
        """,
    "filter under FSDP whose state_dict_type is not known": """
        from lightning.fabric.strategies import FSDPStrategy
        fabric = Fabric(strategy=FSDPStrategy(state_dict_type=args.sdt))
        fabric.launch()
        model, opt = fabric.setup(model, opt)
        fabric.save("c", {"model": model}, filter={"model": keep})
        """,
}


@pytest.mark.parametrize("title", list(REPORTED))
def test_reported(title):
    src, severity = REPORTED[title]
    (finding,) = findings(src)
    assert finding.severity == severity, finding.message


@pytest.mark.parametrize("title", list(SILENT))
def test_silent(title):
    assert [f.message for f in findings(SILENT[title]) if f.severity is not Severity.HINT] == []


def test_swapped_names_get_no_fix_and_say_why():
    (finding,) = findings(REPORTED["swapped, names bound to a dict and a string (no fix)"][0])
    assert finding.fix is None
    assert "No automatic fix" in finding.message


def test_swap_fix_with_path_and_fstring():
    src = 'fabric = Fabric()\nfabric.save({"model": model}, Path(out) / f"ep{epoch}.pt")\n'
    (finding,) = findings(src)
    assert finding.fix is not None
    texts = sorted(e.new_text for e in finding.fix.edits)
    assert texts == ['Path(out) / f"ep{epoch}.pt"', '{"model": model}']


def test_message_names_lightnings_error_and_source():
    src = 'fabric = Fabric(strategy="fsdp")\nfabric.launch()\nmodel, o = fabric.setup(model, o)\nfabric.load("c")\n'
    (finding,) = findings(src)
    assert "state=None" in finding.message and "strategies/fsdp.py:522-527" in finding.message


def test_state_dict_as_the_whole_state_under_fsdp():
    src = 'fabric = Fabric(strategy="fsdp")\nfabric.launch()\nmodel, o = fabric.setup(model, o)\nfabric.save("m.pt", model.state_dict())\n'
    (finding,) = findings(src)
    assert finding.severity is Severity.ERROR and "Could not find a FSDP model" in finding.message
