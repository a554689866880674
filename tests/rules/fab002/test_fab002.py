"""FAB002 (a collective reached on some ranks only): helpers whose body is a collective, a strategy
chosen by the device count, and the implicit collectives of sharded models."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fabric_lsp.engine import Analyzer, Severity
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

FAB002 = RULES_BY_CODE["FAB002"]


def findings(source: str, workspace: Workspace | None = None, path: str | None = None):
    analyzer = Analyzer(workspace or Workspace(), [FAB002])
    return (
        analyzer.analyze(textwrap.dedent(source).lstrip("\n"), path)
        if path
        else analyzer.analyze(textwrap.dedent(source).lstrip("\n"))
    )


def severities(source: str) -> list[Severity]:
    return [f.severity for f in findings(source)]


# -- a strategy chosen by the device count ---------------------------------------------------------

GPUS = """
import argparse
from lightning.fabric import Fabric
parser = argparse.ArgumentParser()
parser.add_argument("--gpus", type=int, default={default})
args = parser.parse_args()
strategy = "ddp" if args.gpus > 1 else "auto"
fabric = Fabric({accelerator}devices=args.gpus, strategy=strategy)
fabric.launch()
if fabric.global_rank == 0:
    fabric.save("ckpt.pt", {{"model": model}})
"""


@pytest.mark.parametrize("default", [1, 2])
@pytest.mark.parametrize("accelerator", ["", 'accelerator="gpu", ', 'accelerator="cpu", '])
def test_strategy_chosen_by_the_gpu_count_is_a_warning(default, accelerator):
    assert severities(GPUS.format(default=default, accelerator=accelerator)) == [Severity.WARNING]


def test_strategy_chosen_by_the_gpu_count_in_statements():
    source = GPUS.format(default=1, accelerator="").replace(
        'strategy = "ddp" if args.gpus > 1 else "auto"',
        'if args.gpus > 1:\n    strategy = "ddp"\nelse:\n    strategy = "auto"',
    )
    assert severities(source) == [Severity.WARNING]


def test_one_gpu_only_stays_silent():
    source = GPUS.format(default=1, accelerator="").replace(
        '"ddp" if args.gpus > 1 else "auto"', '"ddp" if args.gpus > 8 else "auto"'
    )
    source = source.replace("devices=args.gpus", "devices=1")
    assert severities(source) == []


# -- a helper whose body is a collective -----------------------------------------------------------

HELPER = """
from lightning.fabric import Fabric

def save_checkpoint(fabric, model):
    fabric.save("ckpt.pt", {"model": model})

def checkpoint(fabric, model):
    save_checkpoint(fabric, model)

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
save_checkpoint(fabric, model)
checkpoint(fabric, model)
if fabric.global_rank == 0:
    GUARDED
"""


@pytest.mark.parametrize("call", ["save_checkpoint(fabric, model)", "checkpoint(fabric, model)"])
def test_guarded_call_of_a_collective_helper(call):
    source = HELPER.replace("GUARDED", call)
    found = findings(source)
    assert [(f.severity, f.span.start.line) for f in found] == [(Severity.ERROR, 13)]
    assert "save_checkpoint" in found[0].message and "`fabric.save(...)`" in found[0].message
    assert any(r.span.start.line == 3 for r in found[0].related)  # the collective inside the helper


def test_helper_only_called_under_the_guard_is_reported_once():
    source = HELPER.replace("save_checkpoint(fabric, model)\ncheckpoint(fabric, model)\n", "")
    source = source.replace("def checkpoint(fabric, model):\n    save_checkpoint(fabric, model)\n", "")
    source = source.replace("GUARDED", "save_checkpoint(fabric, model)")
    found = findings(source)
    assert [f.span.start.line for f in found] == [3]  # at the collective, as before (its callers are all guarded)


def test_helper_without_a_collective_or_with_its_own_guard_is_silent():
    source = HELPER.replace('fabric.save("ckpt.pt", {"model": model})', "torch.save(model.state_dict(), 'm.pt')")
    assert findings(source.replace("GUARDED", "save_checkpoint(fabric, model)")) == []


def test_guarded_call_of_a_helper_in_another_module(tmp_path):
    (tmp_path / "utils.py").write_text('def save_checkpoint(fabric, state):\n    fabric.save("ckpt.pt", state)\n')
    train = tmp_path / "train.py"
    source = (
        "from lightning.fabric import Fabric\n"
        "from utils import save_checkpoint\n"
        'fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)\n'
        "fabric.launch()\n"
        "save_checkpoint(fabric, {})\n"
        "if fabric.is_global_zero:\n"
        "    save_checkpoint(fabric, {})\n"
    )
    train.write_text(source)
    found = Analyzer(Workspace(str(tmp_path)), [FAB002]).analyze(source, str(train))
    assert [(f.severity, f.span.start.line) for f in found] == [(Severity.ERROR, 6)]
    assert any(r.path and r.path.endswith("utils.py") for r in found[0].related)


# -- implicit collectives: the forward of a sharded model, raw torch.distributed ------------------

IMPLICIT = """
import argparse
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy, FSDPStrategy, ModelParallelStrategy

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 4)
    def forward(self, x):
        return self.layer(x)
    def generate(self, x):
        return self.forward(x)

parser = argparse.ArgumentParser()
parser.add_argument("--fsdp", action="store_true")
args = parser.parse_args()
fabric = Fabric(FABRIC)
fabric.launch()
model = fabric.setup(Net())
x = torch.ones(2, 4)
if fabric.global_rank == 0:
    CALL
"""

FSDP2 = 'accelerator="cuda", devices=2, strategy="fsdp"'


def implicit(fabric: str, call: str = "model(x)") -> list[Severity]:
    return severities(IMPLICIT.replace("FABRIC", fabric).replace("CALL", call))


@pytest.mark.parametrize(
    "fabric, severity",
    [
        (FSDP2, Severity.ERROR),
        ('accelerator="cuda", devices=2, strategy=FSDPStrategy(sharding_strategy="SHARD_GRAD_OP")', Severity.ERROR),
        ('accelerator="cuda", devices=2, strategy=FSDPStrategy(sharding_strategy="NO_SHARD")', None),
        ('accelerator="cuda", strategy="fsdp"', Severity.WARNING),  # devices="auto": the machine's GPU count
        ('accelerator="cuda", devices=1, strategy="fsdp"', None),
        ('accelerator="cuda", devices=2, strategy="deepspeed_stage_3"', Severity.ERROR),
        ('accelerator="cuda", devices=2, strategy=DeepSpeedStrategy(stage=3)', Severity.ERROR),
        ('accelerator="cuda", devices=2, strategy="deepspeed_stage_2"', None),  # ZeRO-2 keeps whole parameters
        ('accelerator="cuda", devices=2, strategy=ModelParallelStrategy(parallelize_fn=fn)', Severity.ERROR),
        ('accelerator="cuda", devices=2, strategy="ddp"', None),  # DDP's forward is local
        ('accelerator="cuda", devices=2, strategy="fsdp" if args.fsdp else "ddp"', Severity.WARNING),
    ],
)
def test_forward_of_a_sharded_model_on_rank_zero(fabric, severity):
    assert implicit(fabric) == ([severity] if severity else [])


@pytest.mark.parametrize(
    "call, severity",
    [
        ("model(x)", Severity.ERROR),
        ("model.forward(x)", Severity.ERROR),
        ("model.generate(x)", Severity.ERROR),  # a method that runs the model
        ("model.state_dict()", None),  # the original module's: no FSDP submodule without an auto_wrap_policy
        ("with FSDP.summon_full_params(model):\n        pass", Severity.ERROR),
        ("dist.barrier()", Severity.ERROR),
        ("dist.all_reduce(x)", Severity.ERROR),
        ("torch.distributed.broadcast_object_list([x], src=0)", Severity.ERROR),
        ("print(x)", None),
        ("torch.save(x, 'x.pt')", None),
    ],
)
def test_implicit_collectives_under_fsdp(call, severity):
    assert implicit(FSDP2, call) == ([severity] if severity else [])


@pytest.mark.parametrize(
    "fabric, severity",
    [
        ('accelerator="cpu", devices=2, strategy="ddp"', Severity.ERROR),
        ('accelerator="cpu", devices=1', None),
        ('accelerator="cuda", strategy="ddp"', Severity.WARNING),  # devices="auto": the machine's GPU count
    ],
)
def test_raw_torch_distributed_collective_whatever_the_strategy(fabric, severity):
    assert implicit(fabric, "dist.barrier()") == ([severity] if severity else [])
    assert implicit(fabric, "model(x)") == []  # a forward is local outside sharding strategies


@pytest.mark.parametrize(
    "strategy, severity",
    [
        ("FSDPStrategy(auto_wrap_policy={torch.nn.Linear})", Severity.ERROR),
        ('FSDPStrategy(auto_wrap_policy={torch.nn.Linear}, sharding_strategy="NO_SHARD")', None),
        ('"deepspeed_stage_3"', None),
    ],
)
def test_state_dict_gathers_under_fsdp_with_wrapped_submodules(strategy, severity):
    fabric = f'accelerator="cuda", devices=2, strategy={strategy}'
    assert implicit(fabric, "model.state_dict()") == ([severity] if severity else [])


def test_sharding_strategy_enum_member():
    fabric = 'accelerator="cuda", devices=2, strategy=FSDPStrategy(sharding_strategy=ShardingStrategy.NO_SHARD)'
    source = IMPLICIT.replace("FABRIC", fabric).replace("CALL", "model(x)")
    source = "from torch.distributed.fsdp import ShardingStrategy\n" + source.lstrip("\n")
    assert severities(source) == []
    assert severities(source.replace("NO_SHARD)", "FULL_SHARD)")) == [Severity.ERROR]


def test_sampling_helper_that_runs_the_model():
    source = IMPLICIT.replace("FABRIC", FSDP2).replace(
        "if fabric.global_rank == 0:\n    CALL",
        "def sample(model, x):\n    return model(x)\n\n"
        "def generate_example(fabric, model, x):\n    fabric.print(sample(model, x))\n\n"
        "generate_example(fabric, model, x)\n"
        "if fabric.global_rank == 0:\n    generate_example(fabric, model, x)",
    )
    found = findings(source)
    assert [f.severity for f in found] == [Severity.ERROR]
    assert "generate_example" in found[0].message and "FSDPStrategy" in found[0].message


def test_forward_not_under_a_guard_is_silent():
    assert (
        severities(IMPLICIT.replace("FABRIC", FSDP2).replace("if fabric.global_rank == 0:\n    CALL", "model(x)")) == []
    )


# -- the runtime proofs' scripts (tests/runtime/rules/FAB002/, run with real Lightning there) -------

RUNTIME = Path(__file__).resolve().parents[2] / "runtime" / "rules" / "FAB002"


@pytest.mark.parametrize("name", ["guarded_save_helper", "guarded_dist_barrier", "sharded_forward_on_rank_zero"])
def test_runtime_scripts_are_judged_as_they_run(name):
    invalid = (RUNTIME / f"{name}.py").read_text()
    assert severities(invalid) == [Severity.ERROR]
    assert severities((RUNTIME / f"{name}.valid.py").read_text()) == []


def test_hand_written_rank_zero_first_with_torch_distributed_is_silent():
    source = """
    import torch.distributed as dist
    from lightning.fabric import Fabric
    fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
    fabric.launch()
    if fabric.global_rank != 0:
        dist.barrier()
    prepare_data()
    if fabric.global_rank == 0:
        dist.barrier()
    """
    assert severities(source) == []


def test_raw_collective_in_a_helper_only_called_under_the_guard_is_reported_once():
    source = """
    import torch.distributed as dist
    from lightning.fabric import Fabric

    def sync():
        dist.barrier()

    fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
    fabric.launch()
    if fabric.global_rank == 0:
        sync()
    """
    assert [f.span.start.line for f in findings(source)] == [4]  # at the barrier, its callers all guarded


def test_method_helper_that_saves():
    source = """
    from lightning.fabric import Fabric

    class Trainer:
        def __init__(self):
            self.fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
            self.fabric.launch()

        def save(self, step):
            self.fabric.save(f"step-{step}.ckpt", {"step": step})

        def fit(self):
            for step in range(10):
                self.save(step)
                if self.fabric.is_global_zero:
                    self.save(-1)
    """
    found = findings(source)
    assert [(f.severity, f.span.start.line) for f in found] == [(Severity.ERROR, 14)]


@pytest.mark.parametrize(
    "fabric, named",
    [
        (FSDP2, ("`FSDPStrategy`", 'sharding_strategy="FULL_SHARD"')),
        (
            'accelerator="cuda", devices=2, strategy=FSDPStrategy(sharding_strategy="HYBRID_SHARD")',
            ('sharding_strategy="HYBRID_SHARD"',),
        ),
        ('accelerator="cuda", devices=2, strategy="deepspeed_stage_3"', ("`DeepSpeedStrategy`", "ZeRO stage 3")),
    ],
)
def test_the_message_names_the_sharding_configuration(fabric, named):
    found = findings(IMPLICIT.replace("FABRIC", fabric).replace("CALL", "model(x)"))
    assert len(found) == 1 and all(n in found[0].message for n in named), found[0].message


def test_a_module_level_rank_flag_tested_in_a_later_statement_guards_its_calls():
    """``IS_MAIN = LOCAL_RANK == 0``, then ``if IS_MAIN: sync()`` in a later module-level
    statement that names no rank itself: the call is still found as rank-guarded."""
    source = """
    import os
    import torch.distributed as dist
    from lightning.fabric import Fabric

    LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))
    IS_MAIN = LOCAL_RANK == 0
    fabric = Fabric(strategy="ddp", devices=2)
    fabric.launch()


    def sync():
        dist.monitored_barrier()


    if IS_MAIN:
        sync()
    """
    found = findings(source)
    assert [f.span.start.line + 1 for f in found] == [16]  # `sync()`, which reaches `dist.monitored_barrier()`
