"""Record what the real Lightning Fabric connector makes of a grid of ``Fabric(...)`` arguments.

Run with an interpreter that has ``lightning`` (CPU torch is enough; deepspeed for the DeepSpeed
rows)::

    .venv-runtime/bin/python scripts/gen_connector_table.py            # rewrite the table
    .venv-runtime/bin/python scripts/gen_connector_table.py --stdout   # print it instead

Each row of ``tests/data/connector_outcomes.json`` holds the arguments (plain values; an object is
``{"obj": "DDPStrategy", "args": {...}}``), the hardware assumed (``host``), the environment
variables set (``env``) and the outcome of ``lightning.fabric.connector._Connector``: the strategy,
accelerator, devices, precision plugin, launcher and cluster environment, or the exception's type
and message, plus the warnings the connector emitted. ``tests/engine/test_lightning_adapter.py``
holds ``fabric_lsp.engine.lightning.connector`` to every row.

The hardware is mocked the way Lightning's own tests do it: ``num_cuda_devices``,
``MPSAccelerator.is_available``, ``XLAAccelerator.is_available``/``auto_device_count`` with
``torch_xla`` stubbed (and installed only on TPU hosts), ``_IS_INTERACTIVE`` and
``torch.multiprocessing.get_all_start_methods``.
``transformer_engine`` is stubbed as installed and ``BitsandbytesPrecision`` is built without its
``__init__`` (the connector only checks its type). The accelerator registry's name set is iterated
sorted (Lightning iterates a ``set``, so the order of names in two messages varies per process).
Object addresses in messages are written ``0x…``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.machinery
import json
import os
import re
import sys
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "tests" / "data" / "connector_outcomes.json"
#: Variables that would change the connector's decisions; cleared before every row.
_CLEARED_PREFIXES = ("LT_", "SLURM_", "TORCHELASTIC_", "LSB_", "JSM_", "PL_")
_CLEARED = ("LOCAL_RANK", "RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "CUDA_VISIBLE_DEVICES")

CPU: dict[str, Any] = {}
CUDA1 = {"cuda": 1}
CUDA2 = {"cuda": 2}
CUDA8 = {"cuda": 8}
MPS = {"mps": True}
TPU8 = {"tpu": 8}
TPU4 = {"tpu": 4}
NOTEBOOK_CUDA2 = {"cuda": 2, "interactive": True}
NOTEBOOK_CPU = {"interactive": True}
WINDOWS = {"start_methods": ["spawn"]}
#: What ``torchrun --nproc-per-node=2`` and ``srun --ntasks-per-node=2`` set in rank 0.
TORCHRUN = {
    "TORCHELASTIC_RUN_ID": "1",
    "LOCAL_RANK": "0",
    "RANK": "0",
    "GROUP_RANK": "0",
    "WORLD_SIZE": "2",
    "LOCAL_WORLD_SIZE": "2",
    "MASTER_ADDR": "127.0.0.1",
    "MASTER_PORT": "29500",
}
SRUN = {
    "SLURM_NTASKS": "2",
    "SLURM_NTASKS_PER_NODE": "2",
    "SLURM_JOB_NAME": "train",
    "SLURM_PROCID": "0",
    "SLURM_LOCALID": "0",
    "SLURM_NODEID": "0",
    "SLURM_JOB_ID": "7",
    "SLURM_NODELIST": "node1",
}


def obj(
    cls: str, base: str | None = None, fabric: bool = True, module: str | None = None, **args: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"obj": cls}
    if module:
        out["module"] = module
    if args:
        out["args"] = args
    if base:
        out["base"] = base
    if not fabric:
        out["fabric"] = False
    return out


# ------------------------------------------------------------------------------------------ grid
def _rows_strategy_strings() -> Iterator[dict]:
    names = [
        "auto",
        "AUTO",
        "ddp",
        "DDP_Spawn",
        "ddp_fork",
        "ddp_notebook",
        "ddp_find_unused_parameters_true",
        "dp",
        "deepspeed",
        "deepspeed_stage_1",
        "deepspeed_stage_2_offload",
        "deepspeed_stage_3",
        "deepspeed_stage_3_offload_nvme",
        "fsdp",
        "fsdp_cpu_offload",
        "xla",
        "xla_fsdp",
        "single_xla",
        "single_tpu",
        "ddp_sharded",
        "single_device",
        "ddp_find_unused_parameters_false",
        "tpu_spawn",
    ]
    for host in (CPU, CUDA2, MPS, TPU8):
        for name in names:
            yield {"args": {"strategy": name}, "host": host}
    for name in ("ddp", "fsdp", "dp", "deepspeed", "xla_fsdp"):
        yield {"args": {"strategy": name, "accelerator": "cpu"}, "host": MPS}
        yield {"args": {"strategy": name, "accelerator": "gpu"}, "host": CUDA1}
    yield {"args": {"strategy": "fsdp", "accelerator": "tpu"}, "host": TPU8}
    yield {"args": {"strategy": "fsdp_cpu_offload", "accelerator": "tpu"}, "host": TPU8}
    yield {"args": {"strategy": "dp", "accelerator": "cpu", "devices": 2}, "host": CUDA2}
    yield {"args": {"strategy": 3}, "host": CPU}
    yield {"args": {"strategy": None}, "host": CPU}


def _rows_accelerators() -> Iterator[dict]:
    for accelerator in ("cpu", "cuda", "gpu", "mps", "tpu", "auto", "CPU", "ddp", "cuda:0"):
        for host in (CPU, CUDA2, MPS, TPU4):
            yield {"args": {"accelerator": accelerator}, "host": host}
    for host in (CPU, CUDA2, MPS):
        yield {"args": {"accelerator": obj("CPUAccelerator")}, "host": host}
    yield {"args": {"accelerator": obj("CUDAAccelerator")}, "host": CUDA2}
    yield {"args": {"accelerator": obj("CUDAAccelerator")}, "host": CPU}
    yield {"args": {"accelerator": obj("MPSAccelerator")}, "host": MPS}
    yield {"args": {"accelerator": obj("MPSAccelerator"), "strategy": "ddp"}, "host": MPS}
    yield {"args": {"accelerator": obj("XLAAccelerator")}, "host": TPU8}
    yield {"args": {"accelerator": obj("XLAAccelerator"), "devices": 1}, "host": TPU8}
    yield {"args": {"accelerator": obj("XLAAccelerator"), "strategy": "fsdp"}, "host": TPU8}
    yield {"args": {"accelerator": obj("CUDAAccelerator"), "strategy": "fsdp"}, "host": CUDA2}
    yield {"args": {"accelerator": obj("CPUAccelerator"), "strategy": "dp", "devices": 2}, "host": CPU}
    yield {"args": {"accelerator": obj("CPUAccelerator"), "precision": "16-mixed"}, "host": CPU}
    yield {"args": {"accelerator": obj("CPUAccelerator"), "devices": 0}, "host": CPU}
    yield {"args": {"accelerator": obj("TPUAccelerator")}, "host": TPU8}


_DEVICES: list[Any] = [
    "auto",
    1,
    2,
    3,
    -1,
    -2,
    "2",
    "-1",
    "0,1",
    "1,",
    "1, 3",
    [0],
    [1],
    [0, 1],
    [0, 0],
    [1, 3],
    0,
    "0",
    [],
    " 0",
    "[]",
    "abc",
    "00",
    "-0",
    "a,b",
    True,
    2.5,
    None,
    ["0"],
    8,
]


def _rows_devices() -> Iterator[dict]:
    for host, accelerator in ((CPU, "cpu"), (CUDA2, "cuda"), (MPS, "mps"), (TPU8, "tpu")):
        for devices in _DEVICES:
            yield {"args": {"accelerator": accelerator, "devices": devices}, "host": host}
    for devices in ("auto", 1, 2, [1], -1):
        yield {"args": {"devices": devices}, "host": CUDA8}
    yield {"args": {"accelerator": "tpu", "devices": 4}, "host": TPU4}
    yield {"args": {"accelerator": "tpu", "devices": [3]}, "host": TPU4}
    yield {"args": {"accelerator": "tpu", "devices": [4]}, "host": TPU4}


def _rows_num_nodes() -> Iterator[dict]:
    for num_nodes in (0, -1, 2, "2", "x", 1.5, None, True):
        yield {"args": {"num_nodes": num_nodes}, "host": CPU}
    yield {"args": {"num_nodes": 2}, "host": CUDA1}
    yield {"args": {"num_nodes": 2, "accelerator": "tpu"}, "host": TPU8}
    yield {"args": {"num_nodes": 4, "devices": 2, "strategy": "deepspeed"}, "host": CUDA2}
    yield {"args": {"num_nodes": 0, "strategy": "bogus"}, "host": CPU}
    yield {"args": {"num_nodes": 0, "devices": 0}, "host": CPU}


_PRECISIONS: list[Any] = [
    None,
    "32-true",
    "16-mixed",
    "bf16-mixed",
    "16-true",
    "bf16-true",
    "64-true",
    "transformer-engine",
    "transformer-engine-float16",
    16,
    32,
    64,
    "16",
    "32",
    "64",
    "bf16",
    "fp16",
    16.0,
    "BF16-mixed",
    8,
]


def _rows_precision() -> Iterator[dict]:
    strategies: list[tuple[Any, dict]] = [
        ("auto", CPU),
        ("auto", CUDA1),
        ("ddp", CUDA2),
        ("deepspeed", CUDA2),
        ("fsdp", CUDA2),
        ("xla", TPU8),
        (obj("ModelParallelStrategy"), CUDA2),
        ("auto", MPS),
    ]
    for strategy, host in strategies:
        for precision in _PRECISIONS:
            args = {"strategy": strategy} if strategy != "auto" else {}
            if precision is not None:
                args["precision"] = precision
            yield {"args": args, "host": host}
    yield {"args": {"accelerator": "tpu", "devices": 1, "precision": "bf16-mixed"}, "host": TPU8}
    yield {"args": {"accelerator": "tpu", "devices": 1, "precision": "bf16-true"}, "host": TPU8}


def _rows_plugins() -> Iterator[dict]:
    half = obj("HalfPrecision", precision="bf16-true")
    yield {"args": {"plugins": half}, "host": CUDA1}
    yield {"args": {"plugins": [half], "precision": "bf16-true"}, "host": CUDA1}
    yield {"args": {"plugins": [half, obj("DoublePrecision")]}, "host": CPU}
    yield {
        "args": {"plugins": [obj("TorchCheckpointIO"), obj("TorchCheckpointIO"), half, obj("Precision")]},
        "host": CPU,
    }
    yield {"args": {"plugins": [obj("DDPStrategy")]}, "host": CPU}
    yield {"args": {"plugins": obj("DDPStrategy")}, "host": CPU}
    yield {"args": {"plugins": "ddp"}, "host": CPU}
    yield {"args": {"plugins": []}, "host": CPU}
    yield {"args": {"plugins": [obj("DoublePrecision")], "strategy": "ddp"}, "host": CPU}
    yield {"args": {"plugins": [obj("MixedPrecision", precision="16-mixed", device="cuda")]}, "host": CUDA1}
    yield {
        "args": {"plugins": [obj("MixedPrecision", precision="16-mixed", device="cuda")], "strategy": "fsdp"},
        "host": CUDA2,
    }
    yield {"args": {"plugins": [obj("FSDPPrecision", precision="bf16-mixed")], "strategy": "fsdp"}, "host": CUDA2}
    yield {"args": {"plugins": [obj("HalfPrecision")], "strategy": "xla"}, "host": TPU8}
    yield {"args": {"plugins": [obj("HalfPrecision")], "accelerator": "tpu", "devices": 1}, "host": TPU8}
    yield {"args": {"plugins": [obj("HalfPrecision")], "strategy": "xla_fsdp"}, "host": TPU8}
    yield {"args": {"plugins": [obj("XLAPrecision", precision="bf16-true")], "strategy": "xla"}, "host": TPU8}
    yield {
        "args": {"plugins": [obj("DeepSpeedPrecision", precision="16-mixed")], "strategy": "deepspeed"},
        "host": CUDA2,
    }
    yield {"args": {"plugins": [obj("HalfPrecision")], "strategy": "deepspeed"}, "host": CUDA2}
    for host in (CPU, CUDA1):
        yield {"args": {"plugins": obj("BitsandbytesPrecision")}, "host": host}
    yield {"args": {"plugins": obj("BitsandbytesPrecision"), "accelerator": obj("CUDAAccelerator")}, "host": CUDA1}
    for strategy, host in (("fsdp", CUDA2), (obj("ModelParallelStrategy"), CUDA2), ("xla", TPU8), ("ddp", CPU)):
        yield {"args": {"plugins": [obj("TorchCheckpointIO")], "strategy": strategy}, "host": host}
    yield {"args": {"plugins": [obj("XLACheckpointIO")], "strategy": "xla"}, "host": TPU8}
    yield {"args": {"plugins": [obj("TorchCheckpointIO")], "accelerator": "tpu", "devices": 1}, "host": TPU8}
    yield {"args": {"plugins": [obj("XLACheckpointIO")], "strategy": "xla_fsdp"}, "host": TPU8}
    for strategy in ("ddp", "fsdp", "auto"):
        yield {"args": {"plugins": [obj("LightningEnvironment")], "strategy": strategy}, "host": CUDA2}
        yield {
            "args": {"plugins": [obj("TorchElasticEnvironment")], "strategy": strategy},
            "host": CUDA2,
            "env": TORCHRUN,
        }
    yield {
        "args": {"plugins": [obj("LightningEnvironment")], "strategy": "fsdp"},
        "host": CUDA2,
        "env": {"LOCAL_RANK": "0"},
    }
    yield {"args": {"plugins": [obj("LightningEnvironment")], "strategy": "xla"}, "host": TPU8}


def _rows_strategy_objects() -> Iterator[dict]:
    ddp = obj("DDPStrategy")
    yield {"args": {"strategy": ddp}, "host": CPU}
    yield {"args": {"strategy": ddp, "devices": 3}, "host": CPU}
    yield {"args": {"strategy": ddp}, "host": CUDA2}
    yield {"args": {"strategy": ddp}, "host": MPS}
    yield {"args": {"strategy": ddp, "accelerator": "cpu"}, "host": MPS}
    yield {"args": {"strategy": ddp}, "host": TPU8}
    for method in ("spawn", "fork", "forkserver"):
        yield {"args": {"strategy": obj("DDPStrategy", start_method=method)}, "host": CPU}
        yield {"args": {"strategy": obj("DDPStrategy", start_method=method)}, "host": WINDOWS}
        yield {"args": {"strategy": obj("DDPStrategy", start_method=method)}, "host": NOTEBOOK_CPU}
    yield {"args": {"strategy": obj("DeepSpeedStrategy")}, "host": CUDA2}
    yield {"args": {"strategy": obj("DeepSpeedStrategy"), "precision": "64-true"}, "host": CUDA2}
    yield {"args": {"strategy": obj("FSDPStrategy")}, "host": CPU}
    yield {"args": {"strategy": obj("FSDPStrategy")}, "host": CUDA2}
    yield {"args": {"strategy": obj("MyFSDP", base="FSDPStrategy")}, "host": CPU}
    yield {"args": {"strategy": obj("MyDDP", base="DDPStrategy", start_method="spawn")}, "host": CPU}
    yield {"args": {"strategy": obj("ModelParallelStrategy")}, "host": CPU}
    yield {"args": {"strategy": obj("ModelParallelStrategy")}, "host": CUDA8}
    yield {"args": {"strategy": obj("ModelParallelStrategy")}, "host": CUDA2, "env": TORCHRUN}
    yield {"args": {"strategy": obj("XLAStrategy")}, "host": TPU8}
    yield {"args": {"strategy": obj("XLAStrategy"), "plugins": [obj("LightningEnvironment")]}, "host": TPU8}
    yield {"args": {"strategy": obj("XLAFSDPStrategy")}, "host": TPU8}
    yield {"args": {"strategy": obj("XLAFSDPStrategy"), "devices": 1}, "host": TPU8}
    yield {"args": {"strategy": obj("SingleDeviceXLAStrategy", device=0)}, "host": TPU8}
    yield {"args": {"strategy": obj("SingleTPUStrategy", device=3)}, "host": TPU8}
    yield {"args": {"strategy": obj("SingleDeviceStrategy", device="cpu")}, "host": CPU}
    yield {"args": {"strategy": obj("SingleDeviceStrategy", device="cuda:1")}, "host": CUDA2}
    yield {"args": {"strategy": obj("SingleDeviceStrategy", device="cpu")}, "host": TPU8}
    yield {"args": {"strategy": obj("DataParallelStrategy")}, "host": CUDA2}
    yield {"args": {"strategy": obj("DataParallelStrategy"), "accelerator": "cpu"}, "host": CPU}
    yield {
        "args": {"strategy": obj("DDPStrategy", fabric=False, module="lightning.pytorch.strategies.ddp")},
        "host": CPU,
    }
    # settings given twice: on the strategy and on Fabric
    acc = obj("CPUAccelerator")
    yield {"args": {"strategy": obj("DDPStrategy", accelerator=acc), "accelerator": "cpu"}, "host": CPU}
    yield {"args": {"strategy": obj("DDPStrategy", accelerator=acc)}, "host": CUDA2}
    yield {"args": {"strategy": obj("DDPStrategy", accelerator=obj("CUDAAccelerator"))}, "host": CPU}
    yield {"args": {"strategy": obj("DDPStrategy", precision=obj("DoublePrecision"))}, "host": CPU}
    yield {
        "args": {"strategy": obj("DDPStrategy", precision=obj("DoublePrecision")), "plugins": [obj("Precision")]},
        "host": CPU,
    }
    yield {
        "args": {"strategy": obj("DDPStrategy", precision=obj("DoublePrecision")), "precision": "64-true"},
        "host": CPU,
    }
    yield {
        "args": {
            "strategy": obj("DDPStrategy", checkpoint_io=obj("TorchCheckpointIO")),
            "plugins": [obj("TorchCheckpointIO")],
        },
        "host": CPU,
    }
    yield {"args": {"strategy": obj("DDPStrategy", checkpoint_io=obj("TorchCheckpointIO"))}, "host": CPU}
    yield {
        "args": {
            "strategy": obj("DDPStrategy", cluster_environment=obj("LightningEnvironment")),
            "plugins": [obj("LightningEnvironment")],
        },
        "host": CPU,
    }
    yield {
        "args": {"strategy": obj("DDPStrategy", cluster_environment=obj("TorchElasticEnvironment"))},
        "host": CPU,
        "env": TORCHRUN,
    }
    yield {
        "args": {"strategy": obj("FSDPStrategy", cluster_environment=obj("TorchElasticEnvironment"))},
        "host": CUDA2,
        "env": TORCHRUN,
    }
    yield {"args": {"strategy": obj("FSDPStrategy", precision=obj("HalfPrecision"))}, "host": CUDA2}
    yield {"args": {"strategy": obj("XLAStrategy", precision=obj("HalfPrecision"))}, "host": TPU8}
    # parallel devices on the strategy
    for devices, accelerator, host in (
        (["cpu", "cpu"], "auto", CPU),
        (["cpu", "cpu"], "cuda", CUDA2),
        (["cpu"], "gpu", CUDA2),
        (["cuda:0", "cuda:1"], "auto", CUDA2),
        (["cuda:1"], "gpu", CUDA2),
        (["cuda:0"], "cpu", CUDA2),
        (["cuda:0", "cuda:1"], "auto", CPU),
        (["cpu", "cpu"], obj("CPUAccelerator"), CPU),
        (["cpu"] * 3, "auto", CPU),
    ):
        args: dict[str, Any] = {"strategy": obj("DDPStrategy", parallel_devices=devices)}
        if accelerator != "auto":
            args["accelerator"] = accelerator
        yield {"args": args, "host": host}
    yield {"args": {"strategy": obj("DDPStrategy", parallel_devices=["cpu"] * 2), "devices": 4}, "host": CPU}
    yield {"args": {"strategy": obj("DDPStrategy", parallel_devices=["cpu"] * 2), "devices": [0]}, "host": CPU}


def _rows_hosts() -> Iterator[dict]:
    for strategy in ("auto", "ddp", "ddp_spawn", "ddp_fork", "ddp_notebook", "dp", "deepspeed", "fsdp"):
        yield {"args": {"strategy": strategy}, "host": NOTEBOOK_CUDA2}
    yield {"args": {"devices": 2}, "host": NOTEBOOK_CUDA2}
    yield {"args": {"devices": -1}, "host": NOTEBOOK_CUDA2}
    yield {"args": {"accelerator": "cpu", "devices": 2}, "host": NOTEBOOK_CPU}
    yield {"args": {"num_nodes": 2}, "host": NOTEBOOK_CPU}
    yield {"args": {"accelerator": "tpu"}, "host": {"tpu": 8, "interactive": True}}
    for strategy in ("ddp_fork", "ddp_notebook", "ddp_spawn", "ddp"):
        yield {"args": {"strategy": strategy}, "host": WINDOWS}


def _rows_env() -> Iterator[dict]:
    cli = {"LT_CLI_USED": "1"}
    yield {"args": {}, "host": CPU, "env": {"LT_STRATEGY": "ddp", "LT_DEVICES": "2", "LT_ACCELERATOR": "cpu"}}
    yield {"args": {"strategy": "deepspeed"}, "host": CPU, "env": {"LT_STRATEGY": "ddp"}}
    yield {"args": {"strategy": "deepspeed"}, "host": CPU, "env": {"LT_STRATEGY": "ddp", **cli}}
    yield {"args": {"strategy": "ddp"}, "host": CPU, "env": {"LT_STRATEGY": "ddp", **cli}}
    yield {"args": {"devices": 4}, "host": CPU, "env": {"LT_DEVICES": "2", **cli}}
    yield {"args": {"devices": 2}, "host": CPU, "env": {"LT_DEVICES": "2", **cli}}
    yield {"args": {"num_nodes": 2}, "host": CPU, "env": {"LT_NUM_NODES": "3", **cli}}
    yield {"args": {}, "host": CPU, "env": {"LT_NUM_NODES": "2"}}
    yield {"args": {}, "host": CPU, "env": {"LT_NUM_NODES": "two"}}
    yield {"args": {"precision": "bf16-mixed"}, "host": CPU, "env": {"LT_PRECISION": "16-mixed", **cli}}
    yield {"args": {}, "host": CPU, "env": {"LT_PRECISION": "16"}}
    yield {"args": {}, "host": CPU, "env": {"LT_PRECISION": "fp16"}}
    yield {"args": {"accelerator": "cuda"}, "host": CUDA1, "env": {"LT_ACCELERATOR": "cpu", **cli}}
    yield {"args": {"accelerator": "cuda"}, "host": CUDA1, "env": {"LT_ACCELERATOR": "cpu"}}
    yield {"args": {"strategy": obj("DDPStrategy")}, "host": CPU, "env": {"LT_STRATEGY": "ddp", **cli}}
    yield {"args": {"strategy": obj("DDPStrategy")}, "host": CPU, "env": {"LT_STRATEGY": "dp"}}
    yield {"args": {}, "host": CPU, "env": {"LT_STRATEGY": "fsdp", "LT_ACCELERATOR": "cuda"}}
    yield {"args": {}, "host": CPU, "env": {"LT_DEVICES": "x", "LT_CLI_USED": "yes"}}
    yield {"args": {"devices": 3}, "host": CPU, "env": {"LT_DEVICES": "2", "LT_CLI_USED": "0"}}
    # cluster environments detected from the environment
    for strategy in ("ddp", "fsdp", obj("ModelParallelStrategy"), "deepspeed"):
        yield {"args": {"strategy": strategy}, "host": CUDA2, "env": TORCHRUN}
        yield {"args": {"strategy": strategy}, "host": CUDA2, "env": {"LOCAL_RANK": "0"}}
    yield {"args": {"strategy": "fsdp"}, "host": CUDA2, "env": SRUN}
    yield {
        "args": {"strategy": "fsdp"},
        "host": CUDA2,
        "env": {k: v for k, v in SRUN.items() if k != "SLURM_NTASKS_PER_NODE"},
    }
    yield {"args": {"strategy": "fsdp"}, "host": CUDA2, "env": {**SRUN, "SLURM_JOB_NAME": "bash"}}
    yield {"args": {"strategy": "fsdp"}, "host": CUDA2, "env": {**SRUN, "SLURM_NTASKS": "1"}}
    # torchelastic with one visible GPU: device ids are not checked
    yield {"args": {"accelerator": "cuda", "devices": 2}, "host": CUDA1, "env": TORCHRUN}
    yield {"args": {"accelerator": "cuda", "devices": [0, 0]}, "host": CUDA1, "env": TORCHRUN}
    yield {"args": {"accelerator": "cuda", "devices": 2}, "host": CUDA1}


def grid() -> list[dict]:
    rows: list[dict] = []
    for make in (
        _rows_strategy_strings,
        _rows_accelerators,
        _rows_devices,
        _rows_num_nodes,
        _rows_precision,
        _rows_plugins,
        _rows_strategy_objects,
        _rows_hosts,
        _rows_env,
    ):
        rows.extend(make())
    for row in rows:
        row.setdefault("env", {})
    return rows


# --------------------------------------------------------------------------- the real connector
def _stub_modules(tpu: bool) -> dict[str, types.ModuleType]:
    import torch

    xm = types.ModuleType("torch_xla.core.xla_model")
    xm.xla_device = lambda n=None, *a, **k: torch.device("xla", n or 0)  # type: ignore[attr-defined]
    recipe = types.ModuleType("transformer_engine.common.recipe")
    recipe.DelayedScaling = lambda **k: ("DelayedScaling", k)  # type: ignore[attr-defined]
    mods = {name: types.ModuleType(name) for name in ("transformer_engine", "transformer_engine.common")}
    mods["transformer_engine.common.recipe"] = recipe
    if tpu:
        mods.update({name: types.ModuleType(name) for name in ("torch_xla", "torch_xla.core", "torch_xla.runtime")})
        mods["torch_xla.core.xla_model"] = xm
    for name, module in mods.items():
        module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    return mods


@contextlib.contextmanager
def _host(host: dict, env: dict) -> Iterator[list[str]]:
    import torch
    from lightning.fabric import connector
    from lightning.fabric.accelerators import ACCELERATOR_REGISTRY, cuda, mps, xla
    from lightning.fabric.plugins.precision import transformer_engine

    cuda_n, tpu_n = host.get("cuda", 0), host.get("tpu", 0)
    base = {k: v for k, v in os.environ.items() if not k.startswith(_CLEARED_PREFIXES) and k not in _CLEARED}
    warned: list[str] = []
    xla_flag = [
        "accelerators.xla",
        "strategies.single_xla",
        "strategies.xla_fsdp",
        "strategies.launchers.xla",
        "plugins.precision.xla",
        "plugins.environments.xla",
        "plugins.io.xla",
    ]
    with contextlib.ExitStack() as stack:
        enter = stack.enter_context
        enter(mock.patch.dict(os.environ, {**base, **env}, clear=True))
        enter(mock.patch.dict(sys.modules, _stub_modules(tpu_n > 0)))
        enter(mock.patch.object(cuda, "num_cuda_devices", lambda: cuda_n))
        enter(mock.patch.object(torch.cuda, "device_count", lambda: cuda_n))
        enter(mock.patch.object(mps.MPSAccelerator, "is_available", staticmethod(lambda: bool(host.get("mps")))))
        enter(mock.patch.object(xla.XLAAccelerator, "is_available", staticmethod(lambda: tpu_n > 0)))
        enter(mock.patch.object(xla.XLAAccelerator, "auto_device_count", staticmethod(lambda: tpu_n)))
        enter(mock.patch.object(xla, "_using_pjrt", lambda: True))
        for name in xla_flag if tpu_n else ():  # elsewhere the real (unmet) requirement stays
            enter(mock.patch(f"lightning.fabric.{name}._XLA_AVAILABLE", True))
        enter(mock.patch.object(transformer_engine, "_TRANSFORMER_ENGINE_AVAILABLE", True))
        enter(mock.patch.object(connector, "_IS_INTERACTIVE", bool(host.get("interactive"))))
        methods = host.get("start_methods", ["fork", "spawn", "forkserver"])
        enter(mock.patch.object(torch.multiprocessing, "get_all_start_methods", lambda: list(methods)))
        enter(mock.patch.object(ACCELERATOR_REGISTRY, "available_accelerators", lambda: sorted(ACCELERATOR_REGISTRY)))
        enter(mock.patch.object(connector, "rank_zero_warn", lambda message, *a, **k: warned.append(str(message))))
        enter(mock.patch.object(connector, "rank_zero_info", lambda *a, **k: None))
        yield warned


def _class(name: str, base: str | None, fabric: bool) -> type:
    import lightning.fabric.accelerators as accelerators
    import lightning.fabric.plugins as plugins
    import lightning.fabric.plugins.environments as environments
    import lightning.fabric.strategies as strategies

    if not fabric:
        import lightning.pytorch.strategies as trainer_strategies

        return getattr(trainer_strategies, name)
    for module in (strategies, accelerators, plugins, environments):
        found = getattr(module, base or name, None)
        if isinstance(found, type):
            return found if base is None else type(name, (found,), {"__module__": "__main__"})
    raise KeyError(name)


def build(value: Any) -> Any:
    """A real object (or plain value) from the table's encoding."""
    import torch

    if isinstance(value, list):
        return [build(v) for v in value]
    if not (isinstance(value, dict) and "obj" in value):
        return value
    cls: Any = _class(value["obj"], value.get("base"), value.get("fabric", True))
    args = {k: build(v) for k, v in value.get("args", {}).items()}
    if "parallel_devices" in args:
        args["parallel_devices"] = [torch.device(d) for d in args["parallel_devices"]]
    if cls.__name__ == "BitsandbytesPrecision":
        return cls.__new__(cls)
    if "ModelParallelStrategy" in [c.__name__ for c in cls.__mro__]:
        args["parallelize_fn"] = lambda module, mesh: module
    return cls(**args)


def _describe(exc: BaseException) -> dict:
    return {"error": [type(exc).__name__, re.sub(r" at 0x[0-9a-fA-F]+>", " at 0x…>", str(exc))]}


def _launcher(strategy: Any) -> str:
    launcher = getattr(strategy, "launcher", None)
    if launcher is None:
        return "none"
    name = type(launcher).__name__
    if name == "_SubprocessScriptLauncher":
        return "subprocess script"
    return "xla" if name == "_XLALauncher" else launcher._start_method


def run_row(row: dict) -> dict:
    from lightning.fabric.connector import _Connector
    from lightning.fabric.strategies import ParallelStrategy

    with _host(row["host"], row["env"]) as warned, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            kwargs = {k: build(v) for k, v in row["args"].items()}
            c = _Connector(**kwargs)
        except Exception as exc:  # noqa: BLE001 - the outcome is the exception
            return {**_describe(exc), "warnings": warned}
        strategy = c.strategy
        parallel = isinstance(strategy, ParallelStrategy)
        devices = strategy.parallel_devices if parallel else [strategy.root_device]
        return {
            "strategy": type(strategy).__name__,
            "accelerator": type(c.accelerator).__name__,
            "devices": [str(d) for d in devices],
            "num_nodes": c._num_nodes_flag,
            "precision_plugin": type(c.precision).__name__,
            "precision": getattr(c.precision, "precision", None),
            "launcher": _launcher(strategy),
            "cluster_environment": type(strategy.cluster_environment).__name__ if parallel else None,
            "warnings": warned,
        }


def dump(table: dict) -> str:
    """One row per line: small, and a changed outcome shows as a one-line diff."""
    rows = ",\n".join(json.dumps(row, ensure_ascii=False) for row in table["rows"])
    return f'{{"lightning": {json.dumps(table["lightning"])}, "rows": [\n{rows}\n]}}\n'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stdout", action="store_true", help="print the table instead of writing it")
    options = parser.parse_args()
    import lightning

    rows = []
    for row in grid():
        row = {"args": row["args"], "host": row["host"], "env": row["env"]}
        row["outcome"] = run_row(row)
        rows.append(row)
    table = {"lightning": lightning.__version__, "rows": rows}
    text = dump(table)
    if options.stdout:
        sys.stdout.write(text)
    else:
        TABLE.write_text(text, encoding="utf-8")
        print(f"{len(rows)} rows → {TABLE.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
