"""Record what the real Lightning Trainer connector makes of a grid of ``Trainer(...)`` arguments.

The Trainer's sibling of ``gen_connector_table.py`` (whose host simulation it reuses). Run with an
interpreter that has ``lightning`` and deepspeed::

    .venv-runtime/bin/python scripts/gen_trainer_connector_table.py            # rewrite the table
    .venv-runtime/bin/python scripts/gen_trainer_connector_table.py --stdout   # print it instead

Each row of ``tests/data/trainer_connector_outcomes.json`` holds the arguments of
``lightning.pytorch.trainer.connectors.accelerator_connector._AcceleratorConnector`` (``accelerator``,
``strategy``, ``devices``, ``num_nodes``, ``precision``, ``plugins``, ``sync_batchnorm``; an object is
``{"obj": "DDPStrategy", "args": {...}}``, a ``lightning.pytorch`` class unless ``module`` names
another), the hardware assumed (``host``), the environment variables set (``env``) and the outcome:
the strategy, accelerator, devices, precision plugin (and the device of a ``MixedPrecision``),
launcher, cluster environment and layer-sync plugin, or the exception's type, message and the
``lightning/...py:line`` that raised it, plus the warnings the connector emitted.
``tests/engine/lightning/test_trainer_connector.py`` holds ``fabric_lsp.engine.lightning.trainer`` to every row.

Besides ``gen_connector_table``'s mocks, the Trainer's own module-level names are patched: the
connector's ``_IS_INTERACTIVE`` and ``rank_zero_warn``, the ``_XLA_AVAILABLE`` of the Trainer's XLA
classes (on TPU hosts) and the registry's name set (sorted).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_connector_table as fabric_table  # noqa: E402  (the sibling script: hosts, stubs)
from gen_connector_table import (  # noqa: E402
    CPU,
    CUDA1,
    CUDA2,
    CUDA8,
    MPS,
    NOTEBOOK_CPU,
    NOTEBOOK_CUDA2,
    SRUN,
    TORCHRUN,
    TPU4,
    TPU8,
    WINDOWS,
    obj,
)

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "tests" / "data" / "trainer_connector_outcomes.json"
FABRIC = "lightning.fabric."
_TRAINER_XLA_FLAGS = (
    "lightning.pytorch.strategies.single_xla._XLA_AVAILABLE",
    "lightning.pytorch.strategies.xla._XLA_AVAILABLE",
    "lightning.pytorch.strategies.launchers.xla._XLA_AVAILABLE",
    "lightning.pytorch.plugins.precision.xla._XLA_AVAILABLE",
)


# ------------------------------------------------------------------------------------------ grid
_STRATEGY_NAMES = (
    "auto",
    "AUTO",
    "ddp",
    "DDP_Spawn",
    "ddp_fork",
    "ddp_notebook",
    "ddp_find_unused_parameters_true",
    "ddp_find_unused_parameters_false",
    "ddp_spawn_find_unused_parameters_true",
    "ddp_fork_find_unused_parameters_false",
    "ddp_notebook_find_unused_parameters_true",
    "dp",
    "deepspeed",
    "deepspeed_stage_1",
    "deepspeed_stage_2_offload",
    "deepspeed_stage_3",
    "deepspeed_stage_3_offload_nvme",
    "fsdp",
    "fsdp_cpu_offload",
    "xla",
    "xla_debug",
    "xla_fsdp",
    "single_xla",
    "single_tpu",
    "single_device",
    "ddp_sharded",
    "horovod",
    "tpu_spawn",
)


def _rows_strategy_strings() -> Iterator[dict]:
    for host in (CPU, CUDA2, MPS, TPU8):
        for name in _STRATEGY_NAMES:
            yield {"args": {"strategy": name}, "host": host}
    for name in ("ddp", "fsdp", "deepspeed", "ddp_spawn", "xla"):
        yield {"args": {"strategy": name, "accelerator": "cpu"}, "host": MPS}
        yield {"args": {"strategy": name, "accelerator": "gpu"}, "host": CUDA1}
        yield {"args": {"strategy": name, "accelerator": "cuda", "devices": 2}, "host": CUDA8}
    yield {"args": {"strategy": "fsdp", "accelerator": "tpu"}, "host": TPU8}
    yield {"args": {"strategy": "fsdp", "accelerator": obj("CUDAAccelerator")}, "host": CUDA2}
    yield {"args": {"strategy": "fsdp", "accelerator": obj("CPUAccelerator")}, "host": CUDA2}
    yield {"args": {"strategy": "fsdp", "accelerator": "cpu"}, "host": CUDA2}
    yield {"args": {"strategy": "deepspeed", "accelerator": "cpu", "devices": 2}, "host": CPU}
    yield {"args": {"strategy": "ddp", "accelerator": "cpu", "devices": 4, "num_nodes": 2}, "host": CPU}
    yield {"args": {"strategy": 3}, "host": CPU}
    yield {"args": {"strategy": None}, "host": CPU}


def _rows_accelerators() -> Iterator[dict]:
    for accelerator in ("cpu", "cuda", "gpu", "mps", "tpu", "auto", "CPU", "hpu", "ddp", "cuda:0", None):
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
    yield {"args": {"accelerator": obj("XLAAccelerator"), "strategy": "ddp"}, "host": TPU8}
    yield {"args": {"accelerator": obj("CPUAccelerator"), "strategy": "ddp", "devices": 2}, "host": CPU}
    yield {"args": {"accelerator": obj("CPUAccelerator"), "precision": "16-mixed"}, "host": CPU}
    yield {"args": {"accelerator": obj("CPUAccelerator"), "devices": 0}, "host": CPU}
    yield {"args": {"accelerator": obj("CUDAAccelerator"), "devices": []}, "host": CUDA2}
    yield {"args": {"accelerator": obj("TPUAccelerator")}, "host": TPU8}
    yield {"args": {"accelerator": obj("CPUAccelerator", module=FABRIC + "accelerators.cpu")}, "host": CPU}


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
    for devices in ("auto", 1, 2, [1], -1, 0, "0", []):
        yield {"args": {"devices": devices}, "host": CUDA8}
    for devices in (0, [], "0"):
        yield {"args": {"devices": devices}, "host": CPU}
        yield {"args": {"devices": devices, "accelerator": "gpu"}, "host": MPS}
    yield {"args": {"accelerator": "tpu", "devices": 4}, "host": TPU4}
    yield {"args": {"accelerator": "tpu", "devices": [3]}, "host": TPU4}
    yield {"args": {"accelerator": "tpu", "devices": [4]}, "host": TPU4}


def _rows_num_nodes() -> Iterator[dict]:
    for num_nodes in (0, -1, 2, "2", 1.5, None, True):
        yield {"args": {"num_nodes": num_nodes}, "host": CPU}
    yield {"args": {"num_nodes": 2}, "host": CUDA1}
    yield {"args": {"num_nodes": 2, "accelerator": "tpu"}, "host": TPU8}
    yield {"args": {"num_nodes": 2, "accelerator": "tpu", "devices": 1}, "host": TPU8}
    yield {"args": {"num_nodes": 4, "devices": 2, "strategy": "deepspeed"}, "host": CUDA2}
    yield {"args": {"num_nodes": 2, "strategy": "fsdp"}, "host": CUDA2}
    yield {"args": {"num_nodes": 0, "strategy": "bogus"}, "host": CPU}
    yield {"args": {"num_nodes": 0, "devices": 0}, "host": CPU}
    yield {"args": {"num_nodes": 0, "accelerator": "cuda"}, "host": CPU}


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
    "bf16-mixed ",
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
    for precision in ("bf16-mixed", "16-true", "64-true", "transformer-engine"):
        yield {"args": {"accelerator": "tpu", "devices": 1, "precision": precision}, "host": TPU8}
    yield {"args": {"accelerator": "cpu", "precision": "16-mixed"}, "host": CUDA1}
    yield {"args": {"accelerator": "cpu", "precision": "bf16-mixed"}, "host": CUDA1}
    yield {"args": {"accelerator": "gpu", "precision": "16-mixed"}, "host": MPS}
    yield {"args": {"accelerator": obj("CUDAAccelerator"), "precision": "bf16-mixed"}, "host": CUDA1}
    yield {"args": {"strategy": obj("MyMP", base="ModelParallelStrategy"), "precision": "16-mixed"}, "host": CUDA2}


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
    yield {"args": {"plugins": [obj("AsyncCheckpointIO")], "strategy": "ddp"}, "host": CPU}
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
    # Fabric's plugins: its precision plugins are other classes, its environments and IO are the same
    yield {"args": {"plugins": [obj("HalfPrecision", module=FABRIC + "plugins.precision.half")]}, "host": CPU}
    yield {
        "args": {"plugins": [obj("LightningEnvironment", module=FABRIC + "plugins.environments.lightning")]},
        "host": CPU,
    }
    yield {"args": {"plugins": [obj("TorchCheckpointIO", module=FABRIC + "plugins.io.torch_io")]}, "host": CPU}


def _rows_layer_sync() -> Iterator[dict]:
    for strategy, host in (("ddp", CPU), ("auto", CPU), ("fsdp", CUDA2), ("deepspeed", CUDA2), ("xla", TPU8)):
        yield {"args": {"strategy": strategy, "sync_batchnorm": True}, "host": host}
    yield {"args": {"devices": 2, "accelerator": "cpu", "sync_batchnorm": True}, "host": CPU}
    sync = obj("TorchSyncBatchNorm")
    yield {"args": {"strategy": "ddp", "plugins": [sync]}, "host": CPU}
    yield {"args": {"strategy": "ddp", "plugins": [sync], "sync_batchnorm": True}, "host": CPU}
    yield {"args": {"strategy": "ddp", "plugins": [sync, sync]}, "host": CPU}
    yield {"args": {"strategy": "ddp", "plugins": [obj("MySync", base="LayerSync")]}, "host": CPU}
    yield {
        "args": {"strategy": "ddp", "plugins": [obj("MySync", base="LayerSync")], "sync_batchnorm": True},
        "host": CPU,
    }
    yield {
        "args": {"strategy": "ddp", "plugins": [obj("MyBN", base="TorchSyncBatchNorm")], "sync_batchnorm": True},
        "host": CPU,
    }
    yield {"args": {"strategy": "ddp", "sync_batchnorm": 1}, "host": CPU}


def _rows_xla_objects() -> Iterator[dict]:
    """Objects the user builds that need torch_xla: they raise before the Trainer sees them."""
    for host in (CPU, TPU8):
        yield {"args": {"accelerator": obj("XLAAccelerator")}, "host": host}
        yield {"args": {"accelerator": obj("TPUAccelerator")}, "host": host}
        yield {"args": {"strategy": obj("SingleDeviceXLAStrategy", device=0)}, "host": host}
        yield {"args": {"strategy": obj("MyXLA", base="XLAStrategy")}, "host": host}
        yield {"args": {"plugins": [obj("XLAPrecision")]}, "host": host}
        yield {"args": {"plugins": [obj("XLACheckpointIO")]}, "host": host}
        yield {"args": {"plugins": [obj("XLAEnvironment")]}, "host": host}


def _rows_strategy_objects() -> Iterator[dict]:
    ddp = obj("DDPStrategy")
    yield {"args": {"strategy": ddp}, "host": CPU}
    yield {"args": {"strategy": ddp, "devices": 3}, "host": CPU}
    yield {"args": {"strategy": ddp}, "host": CUDA2}
    yield {"args": {"strategy": ddp}, "host": MPS}
    yield {"args": {"strategy": ddp, "accelerator": "cpu"}, "host": MPS}
    yield {"args": {"strategy": ddp}, "host": TPU8}
    yield {"args": {"strategy": ddp, "num_nodes": 2}, "host": CUDA2}
    for method in ("spawn", "fork", "forkserver"):
        yield {"args": {"strategy": obj("DDPStrategy", start_method=method)}, "host": CPU}
        yield {"args": {"strategy": obj("DDPStrategy", start_method=method)}, "host": WINDOWS}
        yield {"args": {"strategy": obj("DDPStrategy", start_method=method)}, "host": NOTEBOOK_CPU}
    yield {"args": {"strategy": obj("DeepSpeedStrategy")}, "host": CUDA2}
    yield {"args": {"strategy": obj("DeepSpeedStrategy"), "precision": "64-true"}, "host": CUDA2}
    yield {"args": {"strategy": obj("FSDPStrategy")}, "host": CPU}
    yield {"args": {"strategy": obj("FSDPStrategy")}, "host": CUDA2}
    yield {"args": {"strategy": obj("FSDPStrategy"), "accelerator": "cpu"}, "host": CUDA2}
    yield {"args": {"strategy": obj("MyFSDP", base="FSDPStrategy")}, "host": CPU}
    yield {"args": {"strategy": obj("MyFSDP", base="FSDPStrategy"), "precision": "16-mixed"}, "host": CPU}
    yield {"args": {"strategy": obj("MyDDP", base="DDPStrategy", start_method="spawn")}, "host": CPU}
    yield {"args": {"strategy": obj("ModelParallelStrategy")}, "host": CPU}
    yield {"args": {"strategy": obj("ModelParallelStrategy")}, "host": CUDA8}
    yield {"args": {"strategy": obj("ModelParallelStrategy")}, "host": CUDA2, "env": TORCHRUN}
    yield {"args": {"strategy": obj("ModelParallelStrategy")}, "host": NOTEBOOK_CUDA2}
    yield {"args": {"strategy": obj("XLAStrategy")}, "host": TPU8}
    yield {"args": {"strategy": obj("XLAStrategy")}, "host": CPU}
    yield {"args": {"strategy": obj("XLAStrategy"), "plugins": [obj("LightningEnvironment")]}, "host": TPU8}
    yield {"args": {"strategy": obj("SingleDeviceXLAStrategy", device=0)}, "host": TPU8}
    yield {"args": {"strategy": obj("SingleTPUStrategy", device=3)}, "host": TPU8}
    yield {"args": {"strategy": obj("SingleDeviceStrategy", device="cpu")}, "host": CPU}
    yield {"args": {"strategy": obj("SingleDeviceStrategy", device="cuda:1")}, "host": CUDA2}
    yield {"args": {"strategy": obj("SingleDeviceStrategy", device="cpu")}, "host": TPU8}
    yield {"args": {"strategy": obj("SingleDeviceStrategy", device="cpu"), "devices": 2}, "host": CPU}
    yield {"args": {"strategy": obj("DDPStrategy", module=FABRIC + "strategies.ddp")}, "host": CPU}
    yield {"args": {"strategy": obj("DataParallelStrategy", module=FABRIC + "strategies.dp")}, "host": CUDA2}
    # settings given twice: on the strategy and on the Trainer
    acc = obj("CPUAccelerator")
    yield {"args": {"strategy": obj("DDPStrategy", accelerator=acc), "accelerator": "cpu"}, "host": CPU}
    yield {"args": {"strategy": obj("DDPStrategy", accelerator=acc)}, "host": CUDA2}
    yield {"args": {"strategy": obj("DDPStrategy", accelerator=obj("CUDAAccelerator"))}, "host": CPU}
    yield {"args": {"strategy": obj("DDPStrategy", precision_plugin=obj("DoublePrecision"))}, "host": CPU}
    yield {
        "args": {
            "strategy": obj("DDPStrategy", precision_plugin=obj("DoublePrecision")),
            "plugins": [obj("Precision")],
        },
        "host": CPU,
    }
    yield {
        "args": {"strategy": obj("DDPStrategy", precision_plugin=obj("DoublePrecision")), "precision": "64-true"},
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
    yield {"args": {"strategy": obj("FSDPStrategy", precision_plugin=obj("HalfPrecision"))}, "host": CUDA2}
    yield {"args": {"strategy": obj("XLAStrategy", precision_plugin=obj("HalfPrecision"))}, "host": TPU8}
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
    for strategy in ("auto", "ddp", "ddp_spawn", "ddp_fork", "ddp_notebook", "deepspeed", "fsdp"):
        yield {"args": {"strategy": strategy}, "host": NOTEBOOK_CUDA2}
    yield {"args": {"devices": 2}, "host": NOTEBOOK_CUDA2}
    yield {"args": {"devices": -1}, "host": NOTEBOOK_CUDA2}
    yield {"args": {"accelerator": "cpu", "devices": 2}, "host": NOTEBOOK_CPU}
    yield {"args": {"num_nodes": 2}, "host": NOTEBOOK_CPU}
    yield {"args": {"accelerator": "tpu"}, "host": {"tpu": 8, "interactive": True}}
    for strategy in ("ddp_fork", "ddp_notebook", "ddp_spawn", "ddp", "ddp_fork_find_unused_parameters_true"):
        yield {"args": {"strategy": strategy}, "host": WINDOWS}


def _rows_env() -> Iterator[dict]:
    # the Trainer does not read ``fabric run``'s LT_* variables
    yield {"args": {}, "host": CPU, "env": {"LT_STRATEGY": "ddp", "LT_DEVICES": "2", "LT_ACCELERATOR": "cpu"}}
    for strategy in ("ddp", "fsdp", obj("ModelParallelStrategy"), "deepspeed", "ddp_spawn"):
        yield {"args": {"strategy": strategy}, "host": CUDA2, "env": TORCHRUN}
        yield {"args": {"strategy": strategy}, "host": CUDA2, "env": {"LOCAL_RANK": "0"}}
    yield {"args": {"strategy": "ddp"}, "host": NOTEBOOK_CUDA2, "env": TORCHRUN}
    yield {"args": {"strategy": "fsdp"}, "host": CUDA2, "env": SRUN}
    yield {"args": {"strategy": "ddp"}, "host": CUDA2, "env": SRUN}
    yield {
        "args": {"strategy": "fsdp"},
        "host": CUDA2,
        "env": {k: v for k, v in SRUN.items() if k != "SLURM_NTASKS_PER_NODE"},
    }
    yield {"args": {"strategy": "fsdp"}, "host": CUDA2, "env": {**SRUN, "SLURM_JOB_NAME": "bash"}}
    yield {"args": {"strategy": "fsdp"}, "host": CUDA2, "env": {**SRUN, "SLURM_NTASKS": "1"}}
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
        _rows_layer_sync,
        _rows_xla_objects,
        _rows_strategy_objects,
        _rows_hosts,
        _rows_env,
    ):
        rows.extend(make())
    for row in rows:
        row.setdefault("env", {})
    return rows


# --------------------------------------------------------------------------- the real connector
@contextlib.contextmanager
def _trainer_host(host: dict, env: dict) -> Iterator[list[str]]:
    from lightning.pytorch.accelerators import AcceleratorRegistry
    from lightning.pytorch.trainer.connectors import accelerator_connector

    with contextlib.ExitStack() as stack:
        warned = stack.enter_context(fabric_table._host(host, env))
        enter = stack.enter_context
        enter(mock.patch.object(accelerator_connector, "_IS_INTERACTIVE", bool(host.get("interactive"))))
        enter(mock.patch.object(accelerator_connector, "rank_zero_warn", lambda m, *a, **k: warned.append(str(m))))
        enter(mock.patch.object(accelerator_connector, "rank_zero_info", lambda *a, **k: None))
        enter(mock.patch.object(AcceleratorRegistry, "available_accelerators", lambda: sorted(AcceleratorRegistry)))
        for name in _TRAINER_XLA_FLAGS if host.get("tpu") else ():
            enter(mock.patch(name, True))
        yield warned


def _class(name: str, base: str | None, module: str | None) -> type:
    if module and module.startswith(FABRIC):
        return fabric_table._class(name, base, True)
    import lightning.pytorch.accelerators as accelerators
    import lightning.pytorch.plugins as plugins
    import lightning.pytorch.plugins.environments as environments
    import lightning.pytorch.strategies as strategies

    for source in (strategies, accelerators, plugins, environments):
        found = getattr(source, base or name, None)
        if isinstance(found, type):
            if base is None:
                return found
            body: dict[str, Any] = {"__module__": "__main__"}
            if base == "LayerSync":  # the abstract methods, so that the subclass can be built
                body.update(apply=lambda self, model: model, revert=lambda self, model: model)
            return type(name, (found,), body)
    raise KeyError(name)


def build(value: Any) -> Any:
    """A real object (or plain value) from the table's encoding."""
    import torch

    if isinstance(value, list):
        return [build(v) for v in value]
    if not (isinstance(value, dict) and "obj" in value):
        return value
    cls: Any = _class(value["obj"], value.get("base"), value.get("module"))
    args = {k: build(v) for k, v in value.get("args", {}).items()}
    if "parallel_devices" in args:
        args["parallel_devices"] = [torch.device(d) for d in args["parallel_devices"]]
    if cls.__name__ == "BitsandbytesPrecision":
        return cls.__new__(cls)
    if cls.__name__ == "AsyncCheckpointIO":
        return cls(None)
    return cls(**args)


def _where(exc: BaseException) -> str | None:
    """The innermost ``lightning/...py:line`` of the traceback: the line that raised, or that called
    the builtin that did."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = frame.filename.replace(os.sep, "/")
        if "/lightning/" in path:
            return f"lightning/{path.rsplit('/lightning/', 1)[1]}:{frame.lineno}"
    return None


def _describe(exc: BaseException) -> dict:
    message = re.sub(r" at 0x[0-9a-fA-F]+>", " at 0x…>", str(exc))
    return {"error": [type(exc).__name__, message, _where(exc)]}


def run_row(row: dict) -> dict:
    from lightning.pytorch.strategies import ParallelStrategy
    from lightning.pytorch.trainer.connectors.accelerator_connector import _AcceleratorConnector

    with _trainer_host(row["host"], row["env"]) as warned, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            kwargs = {k: build(v) for k, v in row["args"].items()}
            c = _AcceleratorConnector(**kwargs)
        except Exception as exc:  # noqa: BLE001 - the outcome is the exception
            return {**_describe(exc), "warnings": warned}
        strategy = c.strategy
        parallel = isinstance(strategy, ParallelStrategy)
        devices = strategy.parallel_devices if parallel else [strategy.root_device]
        layer_sync = getattr(strategy, "_layer_sync", None)
        return {
            "strategy": type(strategy).__name__,
            "accelerator": type(c.accelerator).__name__,
            "devices": [str(d) for d in devices],
            "num_nodes": getattr(strategy, "num_nodes", 1),
            "precision_plugin": type(c.precision_plugin).__name__,
            "precision": getattr(c.precision_plugin, "precision", None),
            "amp_device": getattr(c.precision_plugin, "device", None),
            "launcher": fabric_table._launcher(strategy),
            "cluster_environment": type(strategy.cluster_environment).__name__ if parallel else None,
            "layer_sync": type(layer_sync).__name__ if layer_sync is not None else None,
            "warnings": warned,
        }


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
    text = fabric_table.dump({"lightning": lightning.__version__, "rows": rows})
    if options.stdout:
        sys.stdout.write(text)
    else:
        TABLE.write_text(text, encoding="utf-8")
        print(f"{len(rows)} rows → {TABLE.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
