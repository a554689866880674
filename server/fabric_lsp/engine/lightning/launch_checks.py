"""The checks a strategy makes when its processes start (``setup_environment``, run by
``fabric.launch()`` or the first setup call), before any user code runs — after the connector
(:mod:`fabric_lsp.engine.lightning.connector`) accepted the configuration.

Pure functions over the adapter's plain values: ``launch_error(args, outcome)`` is the error
Lightning 2.6.6 raises at launch for a configuration ``Fabric(...)`` accepted, or None. Only
checks whose inputs are all known are made: a constructor argument the code does not give as a
constant makes the check say nothing (``Obj.unknown``).
"""

from __future__ import annotations

import os
from typing import Any, Callable

from fabric_lsp import facts
from fabric_lsp.engine.lightning.connector import ConnectorError, FabricArgs, Launcher, Obj, Outcome


def launch_error(args: FabricArgs, outcome: Outcome) -> ConnectorError | None:
    """The error the strategy's ``setup_environment`` raises for ``outcome``, if any."""
    if outcome.error is not None or outcome.strategy_base is None:
        return None
    for check in (_cuda_only, _rank_indexed_devices, _model_parallel_sizes):
        error = check(args, outcome)
        if error is not None:
            return error
    return None


def missing_config_file(args: FabricArgs, exists: Callable[[str], bool]) -> ConnectorError | None:
    """``DeepSpeedStrategy(config="ds.json")`` whose file is not there (``strategies/deepspeed.py:834``,
    raised by the strategy's constructor). ``exists`` says whether a relative path names a file
    of the workspace; absolute paths are another machine's and are not judged."""
    strategy = args.strategy
    if not isinstance(strategy, Obj):
        return None
    name = facts.CONFIG_FILE_ARGUMENTS.get(strategy.base or strategy.cls)
    path = strategy.arg(name) if name else None
    if not isinstance(path, str) or not path.strip() or os.path.isabs(path) or exists(path):
        return None
    return ConnectorError(
        "FileNotFoundError", f"You passed in a path to a DeepSpeed config but the path does not exist: {path}"
    )


def release_error(outcome: Outcome, version: str) -> ConnectorError | None:
    """The error an older Lightning ``version`` raises at construction for a configuration 2.6.6
    accepts (``facts.PRECISION_ACCEPTED_BEFORE``); None for 2.6.6 itself."""
    if outcome.error is not None or outcome.precision_plugin is None:
        return None
    entry = facts.PRECISION_ACCEPTED_BEFORE.get(outcome.precision_plugin)
    if entry is None or facts.has_feature(entry[0], version) or outcome.precision in entry[1]:
        return None
    name = facts.PRECISION_PLUGIN_ACCEPTS[outcome.precision_plugin][0]
    return ConnectorError(
        "ValueError",
        f"`precision={outcome.precision!r})` is not supported in {name}. `precision` must be one of: {entry[1]}.",
    )


def _cuda_only(args: FabricArgs, outcome: Outcome) -> ConnectorError | None:
    """``DeepSpeedStrategy.setup_environment`` (``strategies/deepspeed.py:641``)."""
    if outcome.strategy_base not in facts.CUDA_ONLY_STRATEGIES:
        return None
    accelerator = outcome.accelerator or ""
    if (
        facts.ACCELERATOR_BASES.get(accelerator, accelerator) == "CUDAAccelerator"
        or accelerator not in facts.ACCELERATOR_MODULES
    ):
        return None  # CUDA, or a project's own accelerator class (its base is not known here)
    return ConnectorError(
        "RuntimeError",
        f"The DeepSpeed strategy is only supported on CUDA GPUs but `{accelerator}` is used.",
    )


def _rank_indexed_devices(args: FabricArgs, outcome: Outcome) -> ConnectorError | None:
    """``_validate_device_index_selection`` (``strategies/deepspeed.py:877``), from ``_setup_distributed``."""
    if outcome.strategy_base not in facts.RANK_INDEXED_DEVICE_STRATEGIES:
        return None
    indices = [_index(d) for d in outcome.devices]
    if any(i is None for i in indices) or indices == list(range(len(indices))):
        return None
    shown = ",".join(str(i) for i in indices)
    return ConnectorError(
        "RuntimeError",
        f"The selected device indices {indices!r} don't match the local rank values of processes."
        " If you need to select GPUs at a specific index, set the `CUDA_VISIBLE_DEVICES` environment variable"
        f" instead. For example: `CUDA_VISIBLE_DEVICES={shown}`.",
    )


def _index(device: str) -> int | None:
    kind, _, index = device.partition(":")
    return int(index) if kind == "cuda" and index.isdigit() else None


def _model_parallel_sizes(args: FabricArgs, outcome: Outcome) -> ConnectorError | None:
    """``ModelParallelStrategy.setup_environment`` → ``_setup_device_mesh`` (``strategies/model_parallel.py:513``)."""
    strategy = args.strategy
    if outcome.strategy_base != "ModelParallelStrategy" or not isinstance(strategy, Obj):
        return None
    if "*" in strategy.unknown or any(name in strategy.unknown for name in facts.MODEL_PARALLEL_SIZES):
        return None
    data = _size(strategy.arg("data_parallel_size", "auto"), outcome.num_nodes)
    tensor = _size(strategy.arg("tensor_parallel_size", "auto"), outcome.num_processes)
    if data is None or tensor is None or data * tensor == outcome.world_size:
        return None
    return ConnectorError(
        "RuntimeError",
        f"The sizes `data_parallel_size={data}` and `tensor_parallel_size={tensor}` multiplied should equal"
        f" the world size ({outcome.world_size}).",
    )


def _size(value: Any, auto: int) -> int | None:
    if value == "auto":
        return auto
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def cluster_settings_error(outcome: Outcome, env: dict[str, str]) -> tuple[ConnectorError, str, str] | None:
    """The error the cluster environment's ``validate_settings`` raises at ``launch()`` for ``outcome``
    resolved under ``env`` (``strategies/launchers/subprocess_script.py:102``), with the variable it
    compares and the place in Lightning; None when nothing is validated or the values agree.

    Only the subprocess-script launcher validates: DDP/DeepSpeed always have it, FSDP and
    ModelParallel none when the cluster creates the processes (``facts.VALIDATE_SETTINGS_CALL``)."""
    if outcome.error is not None or outcome.launcher is not Launcher.SUBPROCESS_SCRIPT:
        return None
    devices, nodes = outcome.num_processes, outcome.num_nodes
    if outcome.cluster_environment == "SLURMEnvironment":
        if env.get("SLURM_JOB_NAME") in facts.SLURM_INTERACTIVE_JOB_NAMES:
            return None
        per_node = env.get("SLURM_NTASKS_PER_NODE")
        if per_node is not None and int(per_node) != devices:
            message = facts.slurm_devices_message(devices, per_node)
            return ConnectorError("ValueError", message), "SLURM_NTASKS_PER_NODE", facts.SLURM_DEVICES_CHECK
        nnodes = env.get("SLURM_NNODES")
        if nnodes is not None and int(nnodes) != nodes:
            message = facts.slurm_nodes_message(nodes, nnodes)
            return ConnectorError("ValueError", message), "SLURM_NNODES", facts.SLURM_NODES_CHECK
        return None
    if outcome.cluster_environment == "TorchElasticEnvironment":
        world = env.get("WORLD_SIZE")
        if world is not None and devices * nodes != int(world):
            message = facts.torchelastic_world_message(devices, nodes, int(world))
            return ConnectorError("ValueError", message), "WORLD_SIZE", facts.TORCHELASTIC_WORLD_CHECK
    return None
