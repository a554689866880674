"""What fabric-lsp knows about Lightning Fabric, as data.

Source of truth: ``lightning/fabric`` 2.6.6 (``fabric.py``, ``connector.py``, ``strategies/*``) and
the project's facts sheet. Every rule reads Lightning knowledge from here, never from string
comparisons of its own.

Names are *canonical qualified names*: the standalone ``lightning_fabric`` package is folded onto
``lightning.fabric`` (same code, a different class object), and re-exports are folded onto the
class they name.
"""

from __future__ import annotations

import enum
import re
from typing import NamedTuple


class Kind(enum.Enum):
    """What a strategy means for the setup contract."""

    DEEPSPEED = "deepspeed"  # DeepSpeedStrategy: separated setup raises; joint takes one optimizer
    XLA = "xla"  # XLAStrategy: separated setup raises
    XLA_FSDP = "xla_fsdp"  # XLAFSDPStrategy: separated setup required, joint setup raises
    FSDP = "fsdp"  # FSDPStrategy: both fine (joint raises with use_orig_params=False)
    MODEL_PARALLEL = "model_parallel"  # joint setup silently wrong; separated is correct
    DDP = "ddp"  # DDP and its spawn/fork variants
    DP = "dp"
    SINGLE_DEVICE = "single_device"
    SINGLE_XLA = "single_xla"
    BASE = "base"  # Strategy / ParallelStrategy themselves (abstract)

    @property
    def raises_on_separated_setup(self) -> bool:
        return self in (Kind.DEEPSPEED, Kind.XLA)


#: Class name of each kind, as Lightning's error message names it.
KIND_CLASS_NAME = {
    Kind.DEEPSPEED: "DeepSpeedStrategy",
    Kind.XLA: "XLAStrategy",
    Kind.XLA_FSDP: "XLAFSDPStrategy",
    Kind.FSDP: "FSDPStrategy",
    Kind.MODEL_PARALLEL: "ModelParallelStrategy",
    Kind.DDP: "DDPStrategy",
    Kind.DP: "DataParallelStrategy",
    Kind.SINGLE_DEVICE: "SingleDeviceStrategy",
    Kind.SINGLE_XLA: "SingleDeviceXLAStrategy",
    Kind.BASE: "Strategy",
}


#: ``strategy="auto"`` / omitted: decided by accelerator and devices (see ``connector.py``).
AUTO_STRATEGY = "auto"

_STRATEGY_MODULES = {
    "DeepSpeedStrategy": ("deepspeed", Kind.DEEPSPEED),
    "XLAStrategy": ("xla", Kind.XLA),
    "XLAFSDPStrategy": ("xla_fsdp", Kind.XLA_FSDP),
    "FSDPStrategy": ("fsdp", Kind.FSDP),
    "ModelParallelStrategy": ("model_parallel", Kind.MODEL_PARALLEL),
    "DDPStrategy": ("ddp", Kind.DDP),
    "DataParallelStrategy": ("dp", Kind.DP),
    "SingleDeviceStrategy": ("single_device", Kind.SINGLE_DEVICE),
    "SingleDeviceXLAStrategy": ("single_xla", Kind.SINGLE_XLA),
    "SingleTPUStrategy": ("single_tpu", Kind.SINGLE_XLA),
    "ParallelStrategy": ("parallel", Kind.BASE),
    "Strategy": ("strategy", Kind.BASE),
}

FABRIC_CLASS = "lightning.fabric.Fabric"
XLA_ACCELERATOR_CLASS = "lightning.fabric.accelerators.XLAAccelerator"

#: Canonical qualified name → strategy kind, for Fabric's own strategy classes.
STRATEGY_CLASSES: dict[str, Kind] = {}
#: Every documented spelling → canonical qualified name.
ALIASES: dict[str, str] = {}


def _build_tables() -> None:
    for cls, (module, kind) in _STRATEGY_MODULES.items():
        canonical = f"lightning.fabric.strategies.{cls}"
        STRATEGY_CLASSES[canonical] = kind
        ALIASES[canonical] = canonical
        ALIASES[f"lightning.fabric.strategies.{module}.{cls}"] = canonical
    for spelling in ("lightning.Fabric", "lightning.fabric.Fabric", "lightning.fabric.fabric.Fabric"):
        ALIASES[spelling] = FABRIC_CLASS
    for spelling in (
        "lightning.fabric.accelerators.XLAAccelerator",
        "lightning.fabric.accelerators.xla.XLAAccelerator",
        "lightning.fabric.accelerators.TPUAccelerator",
        "lightning.fabric.accelerators.tpu.TPUAccelerator",
    ):
        ALIASES[spelling] = XLA_ACCELERATOR_CLASS


_build_tables()

#: Prefixes of classes that look like Fabric's but are not (the Trainer's strategies).
FOREIGN_PREFIXES = ("lightning.pytorch.", "pytorch_lightning.")

#: Top-level packages whose names fabric-lsp understands without jedi.
KNOWN_PACKAGES = ("lightning", "lightning_fabric", "pytorch_lightning")


def canonical(qualname: str) -> str:
    """Fold a qualified name onto its canonical spelling (``lightning_fabric`` → ``lightning.fabric``)."""
    if qualname == "lightning_fabric" or qualname.startswith("lightning_fabric."):
        qualname = "lightning.fabric" + qualname[len("lightning_fabric") :]
    return ALIASES.get(qualname, qualname)


def strategy_kind_of_class(qualname: str) -> Kind | None:
    return STRATEGY_CLASSES.get(canonical(qualname))


def is_fabric_class(qualname: str) -> bool:
    return canonical(qualname) == FABRIC_CLASS


#: The Lightning Trainer and the Lightning classes its rules read, canonical name → every spelling
#: (``pytorch_lightning`` is the standalone package; ``lightning.pytorch`` the unified one).
TRAINER_CLASS = "lightning.pytorch.Trainer"
LIGHTNING_MODULE_CLASS = "lightning.pytorch.LightningModule"
DATA_MODULE_CLASS = "lightning.pytorch.LightningDataModule"
CALLBACK_CLASS = "lightning.pytorch.Callback"
LIGHTNING_CLI_CLASS = "lightning.pytorch.cli.LightningCLI"
MODEL_CHECKPOINT_CLASS = "lightning.pytorch.callbacks.ModelCheckpoint"
EARLY_STOPPING_CLASS = "lightning.pytorch.callbacks.EarlyStopping"
_PYTORCH_SPELLINGS: dict[str, tuple[str, ...]] = {
    TRAINER_CLASS: ("Trainer", "trainer.Trainer", "trainer.trainer.Trainer"),
    LIGHTNING_MODULE_CLASS: ("LightningModule", "core.LightningModule", "core.module.LightningModule"),
    DATA_MODULE_CLASS: ("LightningDataModule", "core.LightningDataModule", "core.datamodule.LightningDataModule"),
    CALLBACK_CLASS: ("Callback", "callbacks.Callback", "callbacks.callback.Callback"),
    LIGHTNING_CLI_CLASS: ("cli.LightningCLI",),
    MODEL_CHECKPOINT_CLASS: ("callbacks.ModelCheckpoint", "callbacks.model_checkpoint.ModelCheckpoint"),
    EARLY_STOPPING_CLASS: ("callbacks.EarlyStopping", "callbacks.early_stopping.EarlyStopping"),
}
#: ``import lightning as L``: the unified package re-exports these at its top level
_TOP_LEVEL = {
    TRAINER_CLASS: "Trainer",
    LIGHTNING_MODULE_CLASS: "LightningModule",
    DATA_MODULE_CLASS: "LightningDataModule",
    CALLBACK_CLASS: "Callback",
}
PYTORCH_ALIASES: dict[str, str] = {
    **{
        f"{package}.{tail}": name
        for name, tails in _PYTORCH_SPELLINGS.items()
        for tail in tails
        for package in ("lightning.pytorch", "pytorch_lightning")
    },
    **{f"lightning.{top}": name for name, top in _TOP_LEVEL.items()},
}


def pytorch_class(qualname: str) -> str | None:
    """The canonical name of the Trainer-side Lightning class ``qualname`` spells (any import path:
    ``lightning.pytorch``, ``pytorch_lightning``, ``lightning.Trainer``), or None."""
    return PYTORCH_ALIASES.get(qualname)


def is_trainer_class(qualname: str) -> bool:
    return pytorch_class(qualname) == TRAINER_CLASS


_TRAINER_STRATEGY_PACKAGES = ("lightning.pytorch.strategies.", "pytorch_lightning.strategies.")


def trainer_strategy_kind(qualname: str) -> Kind | None:
    """The kind of one of the Trainer's strategy classes (``lightning.pytorch.strategies.DDPStrategy``,
    any spelling): that of Fabric's class of the same name (the Trainer's connector reads the
    class by name, :data:`TRAINER_STRATEGY_CLASS_FACTS`)."""
    if not qualname.startswith(_TRAINER_STRATEGY_PACKAGES):
        return None
    name = qualname.rsplit(".", 1)[-1]
    return strategy_kind_of_class_name(name) if name in TRAINER_STRATEGY_CLASS_FACTS else None


#: The Trainer's entry points, each with the LightningModule hooks removed in 2.0.0 that it
#: refuses (``NotImplementedError``, ``trainer/configuration_validator.py:76-89`` for ``fit``,
#: ``:108-116`` for ``validate``/``test``); ``predict`` checks none.
TRAINER_ENTRY_POINTS: dict[str, tuple[str, ...]] = {
    "fit": ("training_epoch_end", "validation_epoch_end"),
    "validate": ("validation_epoch_end",),
    "test": ("test_epoch_end",),
    "predict": (),
}
#: The LightningModule hooks that may call ``self.log`` → its defaults there (``on_step``,
#: ``on_epoch``), from ``_FxValidator.functions`` (``trainer/connectors/logger_connector/fx_validator.py``);
#: logging from any other hook raises. What a method of the module called from a hook logs is
#: logged under that hook.
_STEP, _EPOCH = (True, False), (False, True)
LOG_DEFAULTS: dict[str, tuple[bool, bool]] = {
    **dict.fromkeys(
        (
            "training_step",
            "on_before_backward",
            "backward",
            "on_after_backward",
            "on_before_optimizer_step",
            "optimizer_step",
            "configure_gradient_clipping",
            "clip_gradients",
            "on_before_zero_grad",
            "optimizer_zero_grad",
            "on_train_batch_start",
            "on_train_batch_end",
        ),
        _STEP,
    ),
    **dict.fromkeys(
        (
            "validation_step",
            "test_step",
            "on_validation_batch_start",
            "on_validation_batch_end",
            "on_test_batch_start",
            "on_test_batch_end",
            "on_train_start",
            "on_validation_start",
            "on_test_start",
            "on_train_epoch_start",
            "on_train_epoch_end",
            "on_validation_epoch_start",
            "on_validation_epoch_end",
            "on_test_epoch_start",
            "on_test_epoch_end",
        ),
        _EPOCH,
    ),
    # the 1.x hooks (removed in 2.0, where defining one raises first; `fx_validator.py:137-154` of
    # 1.9.0, `on_epoch_*`/`on_batch_*` until 1.8): a module written for 1.x logs there
    **dict.fromkeys(("training_step_end", "on_batch_start", "on_batch_end"), _STEP),
    **dict.fromkeys(
        (
            "validation_step_end",
            "test_step_end",
            "training_epoch_end",
            "validation_epoch_end",
            "test_epoch_end",
            "on_epoch_start",
            "on_epoch_end",
        ),
        _EPOCH,
    ),
}
#: The hooks of :data:`LOG_DEFAULTS` that run in an evaluation loop: their ``_step`` values never
#: reach ``callback_metrics``, nor anything logged with ``on_epoch=False``
#: (``trainer/connectors/logger_connector/result.py:485-487``)
EVALUATION_LOG_HOOKS = frozenset(
    h for h in LOG_DEFAULTS if h.startswith(("validation_", "test_", "on_validation_", "on_test_"))
)
#: The LightningModule's logging methods (``core/module.py:386``, ``:552``)
LOG_METHODS = ("log", "log_dict")
#: ``configure_optimizers``: torch's optimizers and schedulers by qualified name, and the one
#: scheduler that needs a monitored metric (``core/optimizer.py:200-247``, ``:277-297``)
TORCH_SCHEDULER_PREFIX = "torch.optim.lr_scheduler."
TORCH_OPTIMIZER_PREFIX = "torch.optim."
REDUCE_LR_ON_PLATEAU = "torch.optim.lr_scheduler.ReduceLROnPlateau"
#: The positional parameters of the monitoring callbacks' ``__init__`` and the defaults of those PL
#: rules read (``callbacks/model_checkpoint.py``, ``callbacks/early_stopping.py``; 2.6.6):
#: name → default (``REQUIRED`` where there is none)
REQUIRED = object()
MONITOR_CALLBACK_PARAMETERS: dict[str, tuple[tuple[str, object], ...]] = {
    MODEL_CHECKPOINT_CLASS: (
        ("dirpath", None),
        ("filename", None),
        ("monitor", None),
        ("verbose", False),
        ("save_last", None),
        ("save_top_k", 1),
        ("save_on_exception", False),
        ("save_weights_only", False),
        ("mode", "min"),
        ("auto_insert_metric_name", True),
        ("every_n_train_steps", None),
        ("train_time_interval", None),
        ("every_n_epochs", None),
        ("save_on_train_epoch_end", None),
        ("enable_version_counter", True),
    ),
    EARLY_STOPPING_CLASS: (
        ("monitor", REQUIRED),
        ("min_delta", 0.0),
        ("patience", 3),
        ("verbose", False),
        ("mode", "min"),
        ("strict", True),
        ("check_finite", True),
        ("stopping_threshold", None),
        ("divergence_threshold", None),
        ("check_on_train_epoch_end", None),
        ("log_rank_zero_only", False),
    ),
}
#: the arguments of the monitoring callbacks PL rules read
MONITOR_CALLBACK_ARGUMENTS = (
    "monitor",
    "save_top_k",
    "mode",
    "strict",
    "check_on_train_epoch_end",
    "every_n_epochs",
    "every_n_train_steps",
    "train_time_interval",
)
#: The parameter of every entry point that takes the LightningModule (``trainer/trainer.py``)
ENTRY_POINT_MODEL_PARAMETER = "model"
#: A removed epoch-end hook → the hook that replaced it (it takes no ``outputs``)
REMOVED_EPOCH_END_HOOKS: dict[str, str] = {
    "training_epoch_end": "on_train_epoch_end",
    "validation_epoch_end": "on_validation_epoch_end",
    "test_epoch_end": "on_test_epoch_end",
}
#: ``Trainer.__init__``'s keyword-only parameters in 2.6.6 (``trainer/trainer.py:91-135``): it takes
#: no ``**kwargs``, so any other keyword is a ``TypeError``. A runtime test compares them with
#: ``inspect.signature``.
TRAINER_PARAMETERS: tuple[str, ...] = (
    "accelerator",
    "strategy",
    "devices",
    "num_nodes",
    "precision",
    "logger",
    "callbacks",
    "fast_dev_run",
    "max_epochs",
    "min_epochs",
    "max_steps",
    "min_steps",
    "max_time",
    "limit_train_batches",
    "limit_val_batches",
    "limit_test_batches",
    "limit_predict_batches",
    "overfit_batches",
    "val_check_interval",
    "check_val_every_n_epoch",
    "num_sanity_val_steps",
    "log_every_n_steps",
    "enable_checkpointing",
    "enable_progress_bar",
    "enable_model_summary",
    "accumulate_grad_batches",
    "gradient_clip_val",
    "gradient_clip_algorithm",
    "deterministic",
    "benchmark",
    "inference_mode",
    "use_distributed_sampler",
    "profiler",
    "detect_anomaly",
    "barebones",
    "plugins",
    "sync_batchnorm",
    "reload_dataloaders_every_n_epochs",
    "default_root_dir",
    "enable_autolog_hparams",
    "model_registry",
)
#: The module that defines the Trainer, per top-level package: the analysed environment's (or the
#: project's own, when it is Lightning's repository or vendors it) signature there is the truth
TRAINER_MODULES = {
    "lightning": "lightning.pytorch.trainer.trainer",
    "pytorch_lightning": "pytorch_lightning.trainer.trainer",
}
#: The version whose ``Trainer.__init__`` signature is :data:`TRAINER_PARAMETERS`, as (major, minor)
TRAINER_PARAMETERS_VERSION = (2, 6)


#: The ``Trainer`` classmethods of 1.x's argparse helpers that 2.0 removed (CHANGELOG 2.0.0, "Removed
#: class methods from Trainer"): ``Trainer.add_argparse_args(parser)`` is an AttributeError since
REMOVED_TRAINER_CLASSMETHODS = (
    "add_argparse_args",
    "from_argparse_args",
    "parse_argparser",
    "default_attributes",
    "match_env_arguments",
)


class RemovedArgument(NamedTuple):
    """A ``Trainer(...)`` flag of 1.x that a release removed: the first release without it
    (``since``, (major, minor)) and what replaced it (``instead``)."""

    since: tuple[int, int]
    instead: str


#: Trainer flags of 1.x that a release removed → that release and what replaced them. The release
#: is the first whose ``Trainer.__init__`` lacks the flag, read in the pytorch-lightning wheels
#: 1.4.9, 1.5.0, 1.6.0, 1.7.0, 1.8.0, 1.9.5 and 2.0.0 (as the CHANGELOG says: ``truncated_bptt_steps``
#: and ``distributed_backend`` in 1.5.0, ``reload_dataloaders_every_epoch`` in 1.6.0, eight
#: deprecated flags in 1.7.0, ``weights_save_path`` in 1.8.0, the rest in 2.0.0)
REMOVED_TRAINER_ARGUMENTS: dict[str, RemovedArgument] = {
    "gpus": RemovedArgument((2, 0), '`accelerator="gpu", devices=N`'),
    "tpu_cores": RemovedArgument((2, 0), '`accelerator="tpu", devices=N`'),
    "ipus": RemovedArgument((2, 0), "the `lightning-graphcore` package"),
    "num_processes": RemovedArgument((2, 0), '`accelerator="cpu", devices=N`'),
    "auto_select_gpus": RemovedArgument(
        (2, 0), '`devices="auto"` (or `lightning.pytorch.accelerators.find_usable_cuda_devices`)'
    ),
    "resume_from_checkpoint": RemovedArgument((2, 0), "`trainer.fit(model, ckpt_path=...)`"),
    "progress_bar_refresh_rate": RemovedArgument((1, 7), "`callbacks=[TQDMProgressBar(refresh_rate=N)]`"),
    "weights_summary": RemovedArgument(
        (1, 7), "`callbacks=[ModelSummary(max_depth=N)]` (or `enable_model_summary=False`)"
    ),
    "checkpoint_callback": RemovedArgument((1, 7), "`enable_checkpointing=`"),
    "flush_logs_every_n_steps": RemovedArgument((1, 7), "the logger's own `flush_logs_every_n_steps`"),
    "stochastic_weight_avg": RemovedArgument((1, 7), "`callbacks=[StochasticWeightAveraging(...)]`"),
    "prepare_data_per_node": RemovedArgument(
        (1, 7), "the `prepare_data_per_node` attribute of the LightningModule or DataModule"
    ),
    "process_position": RemovedArgument((1, 7), "`callbacks=[TQDMProgressBar(process_position=N)]`"),
    "terminate_on_nan": RemovedArgument((1, 7), "`detect_anomaly=True`"),
    "track_grad_norm": RemovedArgument((2, 0), "`lightning.pytorch.utilities.grad_norm` in `on_before_optimizer_step`"),
    "replace_sampler_ddp": RemovedArgument((2, 0), "`use_distributed_sampler=`"),
    "auto_lr_find": RemovedArgument((2, 0), "`lightning.pytorch.tuner.Tuner(trainer).lr_find(model)`"),
    "auto_scale_batch_size": RemovedArgument(
        (2, 0), "`lightning.pytorch.tuner.Tuner(trainer).scale_batch_size(model)`"
    ),
    "amp_backend": RemovedArgument((2, 0), "`precision=` (native AMP only)"),
    "amp_level": RemovedArgument((2, 0), "`precision=` (native AMP only)"),
    "move_metrics_to_cpu": RemovedArgument((2, 0), "nothing (removed)"),
    "multiple_trainloader_mode": RemovedArgument((2, 0), "`lightning.pytorch.utilities.CombinedLoader(..., mode=...)`"),
    "reload_dataloaders_every_epoch": RemovedArgument((1, 6), "`reload_dataloaders_every_n_epochs=1`"),
    "weights_save_path": RemovedArgument((1, 8), "`default_root_dir=` or `ModelCheckpoint(dirpath=...)`"),
    "log_gpu_memory": RemovedArgument((1, 7), "`callbacks=[DeviceStatsMonitor()]`"),
    "truncated_bptt_steps": RemovedArgument((1, 5), "manual optimization over the sequence in `training_step`"),
    "distributed_backend": RemovedArgument((1, 5), "`strategy=`"),
}


def is_xla_accelerator_class(qualname: str) -> bool:
    return canonical(qualname) == XLA_ACCELERATOR_CLASS


def strategy_kind_of_class_name(name: str) -> Kind | None:
    """The kind of Fabric's strategy class called ``name`` (when only the spelling is known)."""
    entry = _STRATEGY_MODULES.get(name)
    return entry[1] if entry else None


def strategy_kind_of_string(value: str) -> Kind | None:
    return STRATEGY_STRINGS.get(value.strip().lower())


# --------------------------------------------------------------------------------------------------
# The accelerator connector (``lightning/fabric/connector.py``) as data, for ``engine/lightning/connector.py``.
# Checked against the real 2.6.6 connector by ``scripts/gen_connector_table.py``.
# --------------------------------------------------------------------------------------------------

#: ``STRATEGY_REGISTRY`` of Fabric 2.6.6: name → (class, constructor arguments that matter here).
STRATEGY_REGISTRY: dict[str, tuple[str, dict[str, object]]] = {
    "ddp": ("DDPStrategy", {"start_method": "popen"}),
    "ddp_spawn": ("DDPStrategy", {"start_method": "spawn"}),
    "ddp_fork": ("DDPStrategy", {"start_method": "fork"}),
    "ddp_notebook": ("DDPStrategy", {"start_method": "fork"}),
    "ddp_find_unused_parameters_true": ("DDPStrategy", {"start_method": "popen"}),
    "dp": ("DataParallelStrategy", {}),
    "deepspeed": ("DeepSpeedStrategy", {}),
    "deepspeed_stage_1": ("DeepSpeedStrategy", {"stage": 1}),
    "deepspeed_stage_1_offload": ("DeepSpeedStrategy", {"stage": 1}),
    "deepspeed_stage_2": ("DeepSpeedStrategy", {"stage": 2}),
    "deepspeed_stage_2_offload": ("DeepSpeedStrategy", {"stage": 2}),
    "deepspeed_stage_3": ("DeepSpeedStrategy", {"stage": 3}),
    "deepspeed_stage_3_offload": ("DeepSpeedStrategy", {"stage": 3}),
    "deepspeed_stage_3_offload_nvme": ("DeepSpeedStrategy", {"stage": 3}),
    "fsdp": ("FSDPStrategy", {}),
    "fsdp_cpu_offload": ("FSDPStrategy", {}),
    "single_xla": ("SingleDeviceXLAStrategy", {}),
    "xla_fsdp": ("XLAFSDPStrategy", {}),
    "xla": ("XLAStrategy", {}),
    "single_tpu": ("SingleTPUStrategy", {}),
}
#: The registry's names → the kind of strategy each builds (compared lower-cased, as the connector does).
STRATEGY_STRINGS: dict[str, Kind] = {name: _STRATEGY_MODULES[cls][1] for name, (cls, _) in STRATEGY_REGISTRY.items()}
#: Strategy names the connector treats specially (``_DDP_FORK_ALIASES``, ``_FSDP_ALIASES``).
DDP_FORK_ALIASES = ("ddp_fork", "ddp_notebook")
FSDP_ALIASES = ("fsdp", "fsdp_cpu_offload")


class StrategyClass(NamedTuple):
    module: str  # defining module (objects' default repr names it)
    parent: str | None  # Fabric base class (isinstance checks walk this chain)
    launcher: str  # "ddp" (by start method), "script" (subprocess unless processes exist), "xla", "none"
    precision_plugin: str | None  # the plugin class the strategy insists on (``precision`` setter)
    checkpoint_io: str  # "any", "xla" (XLACheckpointIO only), "none" (setting one raises)
    wraps_module: bool  # setup_module returns a wrapper, so calls of other methods bypass it (FAB003)


_S = "lightning.fabric.strategies."
STRATEGY_CLASS_FACTS: dict[str, StrategyClass] = {
    "Strategy": StrategyClass(_S + "strategy", None, "none", None, "any", False),
    "ParallelStrategy": StrategyClass(_S + "parallel", "Strategy", "none", None, "any", False),
    "SingleDeviceStrategy": StrategyClass(_S + "single_device", "Strategy", "none", None, "any", False),
    "SingleDeviceXLAStrategy": StrategyClass(
        _S + "single_xla", "SingleDeviceStrategy", "none", "XLAPrecision", "xla", False
    ),
    "SingleTPUStrategy": StrategyClass(
        "lightning.fabric._graveyard.tpu", "SingleDeviceXLAStrategy", "none", "XLAPrecision", "xla", False
    ),
    "DataParallelStrategy": StrategyClass(_S + "dp", "ParallelStrategy", "none", None, "any", True),
    "DDPStrategy": StrategyClass(_S + "ddp", "ParallelStrategy", "ddp", None, "any", True),
    "DeepSpeedStrategy": StrategyClass(_S + "deepspeed", "DDPStrategy", "ddp", None, "any", True),
    "FSDPStrategy": StrategyClass(_S + "fsdp", "ParallelStrategy", "script", "FSDPPrecision", "none", True),
    "ModelParallelStrategy": StrategyClass(_S + "model_parallel", "ParallelStrategy", "script", None, "none", False),
    "XLAStrategy": StrategyClass(_S + "xla", "ParallelStrategy", "xla", "XLAPrecision", "xla", False),
    # XLAFSDP wraps the root module in XlaFullyShardedDataParallel (strategies/xla_fsdp.py:222)
    "XLAFSDPStrategy": StrategyClass(_S + "xla_fsdp", "ParallelStrategy", "xla", "XLAPrecision", "xla", True),
}
#: Strategies whose constructor sets ``num_nodes`` / has ``cluster_environment`` of its own.
STRATEGIES_WITH_NUM_NODES = ("DDPStrategy", "FSDPStrategy", "ModelParallelStrategy")
STRATEGIES_OWN_CLUSTER_ENVIRONMENT = {"XLAStrategy": "XLAEnvironment", "XLAFSDPStrategy": "XLAEnvironment"}
#: The message each strategy's ``precision`` setter raises with when handed another plugin.
STRATEGY_PRECISION_SETTER_NAME = {
    "FSDPStrategy": "FSDP",
    "XLAStrategy": "XLA",
    "SingleDeviceXLAStrategy": "XLA",
    "XLAFSDPStrategy": "XLA FSDP",
}
#: Launchers that work in a notebook / REPL (``is_interactive_compatible``).
INTERACTIVE_LAUNCHERS = ("fork", "xla")
#: The connector's RuntimeError for any other launcher in a notebook / REPL (connector.py:522-530).
INTERACTIVE_ERROR = "is not compatible with an interactive environment"
#: A fork-based launcher (``ddp_notebook``/``ddp_fork``) forks after the notebook initialised CUDA:
#: the processes fail (PyTorch's lazy CUDA init in a forked child; Lightning's own check,
#: ``strategies/launchers/multiprocessing.py:191-219``, words it the same way)
FORK_AFTER_CUDA_ERROR = (
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
    "you must use the 'spawn' start method or avoid CUDA initialization in the main process."
)
#: The strategy that replaces ``ddp`` in a notebook: DDP with the fork launcher (strategies/ddp.py:267).
NOTEBOOK_DDP_STRATEGY = "ddp_notebook"
#: Start methods of ``multiprocessing`` per platform (``torch.multiprocessing.get_all_start_methods()``).
START_METHODS_POSIX = ("fork", "spawn", "forkserver")
START_METHODS_WINDOWS = ("spawn",)

#: Accelerator registry (name → class), in registration order; ``auto``/``gpu`` are handled apart.
ACCELERATOR_REGISTRY: dict[str, str] = {
    "cpu": "CPUAccelerator",
    "cuda": "CUDAAccelerator",
    "mps": "MPSAccelerator",
    "tpu": "XLAAccelerator",
}
ACCELERATOR_MODULES: dict[str, str] = {
    "Accelerator": "lightning.fabric.accelerators.accelerator",
    "CPUAccelerator": "lightning.fabric.accelerators.cpu",
    "CUDAAccelerator": "lightning.fabric.accelerators.cuda",
    "MPSAccelerator": "lightning.fabric.accelerators.mps",
    "XLAAccelerator": "lightning.fabric.accelerators.xla",
    "TPUAccelerator": "lightning.fabric._graveyard.tpu",
}
#: Accelerator class → the class it is (``TPUAccelerator`` is a deprecated alias subclass).
ACCELERATOR_BASES = {"TPUAccelerator": "XLAAccelerator"}


class PluginClass(NamedTuple):
    module: str
    category: str  # "Precision", "CheckpointIO", "ClusterEnvironment" (the connector's plugin kinds)
    precision: str | None = None  # the ``precision`` attribute when fixed by the class
    parent: str | None = None  # Fabric base class, for isinstance checks
    external: bool | None = None  # cluster environments: processes created outside Lightning


_P = "lightning.fabric.plugins."
PLUGIN_CLASSES: dict[str, PluginClass] = {
    "Precision": PluginClass(_P + "precision.precision", "Precision", "32-true"),
    "DoublePrecision": PluginClass(_P + "precision.double", "Precision", "64-true", "Precision"),
    "HalfPrecision": PluginClass(_P + "precision.half", "Precision", "16-true", "Precision"),
    "MixedPrecision": PluginClass(_P + "precision.amp", "Precision", None, "Precision"),
    "DeepSpeedPrecision": PluginClass(_P + "precision.deepspeed", "Precision", None, "Precision"),
    "FSDPPrecision": PluginClass(_P + "precision.fsdp", "Precision", None, "Precision"),
    "XLAPrecision": PluginClass(_P + "precision.xla", "Precision", None, "Precision"),
    # no class attribute of its own: it inherits Precision's "32-true"
    "BitsandbytesPrecision": PluginClass(_P + "precision.bitsandbytes", "Precision", "32-true", "Precision"),
    # the class attribute is "transformer-engine" whatever the weights dtype
    "TransformerEnginePrecision": PluginClass(
        _P + "precision.transformer_engine", "Precision", "transformer-engine", "Precision"
    ),
    "CheckpointIO": PluginClass(_P + "io.checkpoint_io", "CheckpointIO"),
    "TorchCheckpointIO": PluginClass(_P + "io.torch_io", "CheckpointIO", parent="CheckpointIO"),
    "XLACheckpointIO": PluginClass(_P + "io.xla", "CheckpointIO", parent="TorchCheckpointIO"),
    "LightningEnvironment": PluginClass(_P + "environments.lightning", "ClusterEnvironment", external=None),
    "TorchElasticEnvironment": PluginClass(_P + "environments.torchelastic", "ClusterEnvironment", external=True),
    "SLURMEnvironment": PluginClass(_P + "environments.slurm", "ClusterEnvironment", external=True),
    "LSFEnvironment": PluginClass(_P + "environments.lsf", "ClusterEnvironment", external=True),
    "MPIEnvironment": PluginClass(_P + "environments.mpi", "ClusterEnvironment", external=True),
    "KubeflowEnvironment": PluginClass(_P + "environments.kubeflow", "ClusterEnvironment", external=True),
    "XLAEnvironment": PluginClass(_P + "environments.xla", "ClusterEnvironment", external=False),
}

#: Precision plugins whose ``precision`` comes from their constructor (the others' is fixed by the class).
PRECISION_FROM_ARGUMENT = ("HalfPrecision", "MixedPrecision", "DeepSpeedPrecision", "FSDPPrecision", "XLAPrecision")
#: Registry entries Lightning cannot instantiate: ``STRATEGY_REGISTRY.get(name)`` calls the class
#: without its required argument and raises ``TypeError`` (class whose ``__init__`` it is, argument).
STRATEGY_REQUIRED_ARGUMENTS = {
    "SingleDeviceXLAStrategy": ("SingleDeviceXLAStrategy", "device"),
    "SingleTPUStrategy": ("SingleDeviceXLAStrategy", "device"),
}

#: Classes whose constructor needs ``torch_xla`` (raising ``ModuleNotFoundError`` without it).
XLA_CLASSES = frozenset(
    {
        "XLAAccelerator",
        "TPUAccelerator",
        "XLAStrategy",
        "XLAFSDPStrategy",
        "SingleDeviceXLAStrategy",
        "SingleTPUStrategy",
        "XLAPrecision",
        "XLACheckpointIO",
        "XLAEnvironment",
    }
)
TORCH_XLA_MISSING = "Requirement 'torch_xla>=1.13' not met. HINT: Try running `pip install -U 'torch_xla>=1.13'`"

#: ``precision=`` values (``_PRECISION_INPUT_STR`` + ``_INT`` + ``_STR_ALIAS``, in the message's order).
PRECISION_INPUTS: tuple[object, ...] = (
    "transformer-engine",
    "transformer-engine-float16",
    "16-true",
    "16-mixed",
    "bf16-true",
    "bf16-mixed",
    "32-true",
    "64-true",
    64,
    32,
    16,
    "64",
    "32",
    "16",
    "bf16",
)
#: Legacy spellings and what they mean (``_PRECISION_INPUT_STR_ALIAS_CONVERSION``).
PRECISION_ALIASES = {"64": "64-true", "32": "32-true", "16": "16-mixed", "bf16": "bf16-mixed"}
#: the precision of Lightning's only 8-bit floating point training (FP8 through NVIDIA Transformer
#: Engine, ``TransformerEnginePrecision``): what a value that names 8 bits (``"8-mixed"``, ``"fp8"``)
#: asks for, where the closest spelling would be a 16-bit one
FP8_PRECISION = "transformer-engine"
#: Precisions each precision plugin accepts (its constructor raises otherwise), and its message name.
PRECISION_PLUGIN_ACCEPTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "DeepSpeedPrecision": ("DeepSpeed", ("32-true", "16-true", "bf16-true", "16-mixed", "bf16-mixed")),
    "FSDPPrecision": ("FSDP", ("32-true", "16-true", "bf16-true", "16-mixed", "bf16-mixed")),
    "XLAPrecision": ("XLA", ("32-true", "16-true", "bf16-true")),
}
#: ``ModelParallelStrategy`` accepts only these (checked by the connector itself).
MODEL_PARALLEL_PRECISIONS = ("32-true", "bf16-mixed", "bf16-true", "16-true")
#: Precision input → plugin class for strategies without a plugin of their own.
GENERIC_PRECISION_PLUGINS = {
    "16-true": "HalfPrecision",
    "bf16-true": "HalfPrecision",
    "32-true": "Precision",
    "64-true": "DoublePrecision",
    "transformer-engine": "TransformerEnginePrecision",
    "transformer-engine-float16": "TransformerEnginePrecision",
    "16-mixed": "MixedPrecision",
    "bf16-mixed": "MixedPrecision",
}

#: Environment variables ``fabric run`` sets (``LT_<NAME>``), in the order the connector reads them.
CLI_ARGUMENTS = ("accelerator", "strategy", "devices", "num_nodes", "precision")
CLI_DEFAULTS: dict[str, object] = {
    "accelerator": "auto",
    "strategy": "auto",
    "devices": "auto",
    "num_nodes": 1,
    "precision": None,
}
#: Cluster environments detected from the process environment, by priority (``_Connector``): the
#: variables that must all be set. SLURM is detected by ``SLURM_NTASKS`` unless the job is named
#: ``bash``/``interactive``; MPI needs mpi4py and an MPI world and is not modelled.
TORCHELASTIC_VARIABLE = "TORCHELASTIC_RUN_ID"
SLURM_VARIABLE = "SLURM_NTASKS"
SLURM_INTERACTIVE_JOB_NAMES = ("bash", "interactive")
LSF_VARIABLES = ("LSB_JOBID", "LSB_DJOB_RANKFILE", "JSM_NAMESPACE_LOCAL_RANK", "JSM_NAMESPACE_SIZE")


# --------------------------------------------------------------------------------------------------
# Ranks, collectives and launch (``fabric.py`` 2.6.6; FAB002, FAB007)
# --------------------------------------------------------------------------------------------------

#: Fabric methods every rank must call: ``barrier``/``broadcast``/``all_gather``/``all_reduce``
#: (fabric.py:629-705) and ``save``/``load``, which end in ``self.barrier()`` (fabric.py:867, 915).
ALWAYS_COLLECTIVE = ("save", "load", "barrier", "broadcast", "all_gather", "all_reduce")
#: Collectives that end in (or are) a barrier: one of them on the other ranks pairs with another.
BARRIER_ENDING = ("save", "load", "barrier")
#: ``load_raw`` is collective where the strategy's ``load_checkpoint`` broadcasts the path
#: (strategies/deepspeed.py:501, fsdp.py:529, model_parallel.py:288).
LOAD_RAW_COLLECTIVE_KINDS = (Kind.DEEPSPEED, Kind.FSDP, Kind.MODEL_PARALLEL)
#: Every Fabric method that is (or, for ``load_raw``, may be) a collective.
COLLECTIVE_METHODS = (*ALWAYS_COLLECTIVE, "load_raw")
#: Attributes that hold a process's rank (Fabric's properties, and ``rank_zero_only.rank``).
RANK_ATTRIBUTES = ("global_rank", "local_rank", "node_rank")
#: Boolean attributes true on rank 0 only.
RANK_ZERO_FLAGS = ("is_global_zero",)
#: Functions returning the process's rank (``torch.distributed``).
RANK_FUNCTIONS = ("get_rank",)
#: Attributes holding the number of processes (a test on them is not a rank test).
WORLD_SIZE_ATTRIBUTES = ("world_size",)
#: Decorators that make a function run on rank 0 only (lightning_utilities' ``rank_zero_only``,
#: re-exported by ``lightning.fabric.utilities`` and ``lightning.pytorch.utilities``).
RANK_ZERO_ONLY = "rank_zero_only"
#: Decorators that call the function they wrap with the caller's own arguments (on some ranks, or
#: without autograd): its call sites show every value its parameters get
CALL_THROUGH_DECORATORS = (RANK_ZERO_ONLY, "no_grad", "inference_mode", "enable_grad")
#: ``with fabric.rank_zero_first():`` runs its body on rank 0 while the others wait at another
#: barrier (fabric.py:711-731, an ``_InfiniteBarrier`` on its own process group).
RANK_ZERO_FIRST = "rank_zero_first"

# Implicit collectives: calls that are not Fabric methods but need every rank (FAB002).
#: ``torch.distributed`` functions every process of the group must call (torch's
#: ``distributed_c10d.py``), whatever Fabric's strategy, as soon as several processes run.
TORCH_DISTRIBUTED_COLLECTIVES = frozenset(
    "torch.distributed." + name
    for name in (
        "barrier",
        "monitored_barrier",
        "all_reduce",
        "all_gather",
        "all_gather_into_tensor",
        "all_gather_object",
        "broadcast",
        "broadcast_object_list",
        "reduce",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "gather",
        "gather_object",
        "scatter",
        "scatter_object_list",
        "all_to_all",
        "all_to_all_single",
    )
) | {
    # gathers every rank's shard of the parameters (torch's FullyShardedDataParallel)
    "torch.distributed.fsdp.FullyShardedDataParallel.summon_full_params",
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel.summon_full_params",
}
#: FSDPStrategy's default ``sharding_strategy`` (strategies/fsdp.py:151) and the one that keeps the
#: parameters whole on every rank ("identical to regular DDP", fsdp.py:118); a string is looked up
#: in ``ShardingStrategy`` upper-cased (fsdp.py:779), an enum member stands for itself.
FSDP_DEFAULT_SHARDING = "FULL_SHARD"
FSDP_UNSHARDED = ("NO_SHARD",)
#: The enum that names FSDP's sharding strategies (its members are written ``ShardingStrategy.X``).
FSDP_SHARDING_ENUM = "ShardingStrategy"
#: ``devices`` values whose process count is the machine's device count (never known statically).
DEVICES_FROM_MACHINE = ("auto", -1, "-1")


def forward_is_collective(strategy_base: str | None, strategy: object) -> bool | None:
    """Whether the forward of a model set up under this strategy gathers parameters from every rank
    (``_FabricModule.forward`` runs the strategy's wrapper, wrappers.py:130-136): FSDP unless
    ``NO_SHARD`` (fsdp.py:298-303 wraps the module in ``FullyShardedDataParallel``), DeepSpeed at
    ZeRO stage 3 (deepspeed.py:324-325; stages 1 and 2 keep the parameters whole), ModelParallel
    (model_parallel.py:185: ``parallelize_fn`` applies tensor parallelism or FSDP2). DDP's forward
    is local (ddp.py:130: ``DistributedDataParallel``, whose forward only broadcasts buffers).
    None when the strategy's arguments are not known statically."""
    if strategy_base == "FSDPStrategy":
        return fsdp_shards(strategy)
    if strategy_base == "DeepSpeedStrategy":
        stage = deepspeed_stage(strategy)
        return None if stage is None else stage == 3
    return strategy_base == "ModelParallelStrategy"


def state_dict_is_collective(strategy_base: str | None, strategy: object) -> bool | None:
    """Whether ``model.state_dict()`` of a set-up model gathers from every rank. ``_FabricModule``
    hands it to the original module (wrappers.py:150-157), so it gathers only where FSDP wrapped
    submodules of that module in place: a sharding FSDP given an ``auto_wrap_policy``
    (fsdp.py:287-296), whose wrapped submodules take torch's default full state dict (Lightning
    switches the type only inside its own ``save``/``load``, fsdp.py:805-830)."""
    if strategy_base != "FSDPStrategy":
        return False
    shards = fsdp_shards(strategy)
    policy = strategy_argument(strategy, "auto_wrap_policy", None)
    if policy is None or shards is False:
        return False
    return None if shards is None else True


def sharding_label(strategy_base: str | None, strategy: object) -> str:
    """How a strategy shards, for a message: ``sharding_strategy="FULL_SHARD"``, ``ZeRO stage 3``."""
    if strategy_base == "FSDPStrategy":
        sharding = strategy_argument(strategy, "sharding_strategy", FSDP_DEFAULT_SHARDING)
        return f'sharding_strategy="{sharding.rsplit(".", 1)[-1].upper()}"' if isinstance(sharding, str) else ""
    if strategy_base == "DeepSpeedStrategy":
        stage = deepspeed_stage(strategy)
        return f"ZeRO stage {stage}" if stage is not None else ""
    if strategy_base == "ModelParallelStrategy":
        return "its `parallelize_fn`"
    return ""


def fsdp_shards(strategy: object) -> bool | None:
    """Whether an FSDP ``strategy`` argument shards the parameters (None: not known statically)."""
    sharding = strategy_argument(strategy, "sharding_strategy", FSDP_DEFAULT_SHARDING)
    if not isinstance(sharding, str):
        return None
    return sharding.rsplit(".", 1)[-1].upper() not in FSDP_UNSHARDED


#: The ``Fabric(...)`` arguments that decide how many processes run (the connector's strategy,
#: accelerator, device and node choices).
PROCESS_ARGUMENTS = ("accelerator", "strategy", "devices", "num_nodes")
#: Methods that call ``_validate_launched()`` first (fabric.py:637-817, 1201-1245), and ``save``/
#: ``load``, which reach it through their final ``barrier()``.
NEEDS_LAUNCH = (
    "setup",
    "setup_module",
    "setup_optimizers",
    "setup_dataloaders",
    "barrier",
    "broadcast",
    "all_gather",
    "all_reduce",
    "init_module",
    "sharded_model",
    "save",
    "load",
)
#: Strategies ``_validate_launched`` exempts (fabric.py:1194: SingleDeviceStrategy and its XLA
#: subclass, DataParallelStrategy).
LAUNCH_EXEMPT_KINDS = (Kind.SINGLE_DEVICE, Kind.SINGLE_XLA, Kind.DP)
#: Launchers under which ``launch()`` needs a function (fabric.py:1005: ``_MultiProcessingLauncher``
#: for every start method, ``_XLALauncher``).
FUNCTION_LAUNCHERS = ("spawn", "fork", "forkserver", "xla")
#: Strategy kinds whose launcher can be one of those (DDP's spawn/fork variants, XLA, XLAFSDP).
SPAWNING_KINDS = (Kind.DDP, Kind.XLA, Kind.XLA_FSDP)
#: ``Fabric.world_size`` (fabric.py:203-205) is ``num_nodes * num_processes`` from construction on: the
#: connector sets the world ranks before any launch (connector.py:518-519 → strategies/ddp.py:237). A
#: ``launch()`` only under ``if fabric.world_size > 1`` does not run with one process, where every
#: strategy but the exempt ones still fails ``_validate_launched`` (fabric.py:1193-1197).
WORLD_SIZE_ATTRIBUTE = "world_size"
#: Where Lightning's own objects hold a launcher: ``Strategy.launcher`` returns ``self._launcher``
#: (strategies/strategy.py:73-74), a ``_Launcher`` whose ``launch`` (strategies/launchers/launcher.py:35)
#: is not ``Fabric.launch``. A Fabric has neither attribute, so ``<x>.launcher.launch(...)`` (Lightning's
#: ``fabric.py:1120``, ``pytorch/trainer/call.py:48``, vendored in a project) never launches one.
LAUNCHER_ATTRIBUTES = ("launcher", "_launcher")
#: What shows a script run by the Fabric CLI (``fabric run``, ``lightning run model`` before 2.2), which
#: sets ``LT_CLI_USED=1`` (then ``launch()`` must not be called, fabric.py:989): a command line — the
#: command followed by an option or a ``.py`` path — or the CLI module or variable named. A sentence
#: that merely names ``fabric run`` is not a command line.
CLI_RUN_PATTERN = (
    r"\b(?:fabric\s+run|lightning\s+run\s+model)(?:\s+--?[\w-]+(?:[= ][^\s-][^\s]*)?)*\s+[\w./${}-]+\.py\b"
    r"|\blightning(?:_fabric|\.fabric)\.cli\b|\bLT_CLI_USED\b"
)


# --------------------------------------------------------------------------------------------------
# Per-version facts (the catalogue's version history, checked in the wheels); default 2.6.6.
# --------------------------------------------------------------------------------------------------

#: The newest Lightning release the rules know about: the default when none is installed.
#: Precision plugins that override ``pre_backward``/``backward``/``post_backward``: with one of them
#: (or a subclass) ``_FabricModule.forward`` hooks its outputs so that ``loss.backward()`` raises
#: unless it runs inside ``fabric.backward`` (wrappers.py:230-240, 368-373). No strategy of 2.6.6
#: overrides ``Strategy.backward``, so the precision plugin alone decides (FAB004).
PRECISION_PLUGINS_REQUIRING_FABRIC_BACKWARD = frozenset({"MixedPrecision", "DeepSpeedPrecision", "FSDPPrecision"})
#: Fabric methods that set up a model and count it in ``Fabric._models_setup`` (fabric.py:300, 373).
MODEL_SETUP_METHODS = ("setup", "setup_module")
#: Methods ``_FabricModule`` routes through the strategy's wrapper from the start (FAB003): the
#: LightningModule step methods (wrappers.py:47, ``_LIGHTNING_MODULE_STEP_METHODS``, put in
#: ``_forward_methods`` at wrappers.py:122) — only these four, not every ``*_step`` name.
FORWARD_REDIRECTED_METHODS = frozenset({"training_step", "validation_step", "test_step", "predict_step"})
#: Public attributes of ``_FabricModule`` itself (``dir(_FabricModule)`` in 2.6.6: the ``nn.Module``
#: API, ``_DeviceDtypeModuleMixin``, ``mark_forward_method``, ``module``). Python finds them without
#: ``_FabricModule.__getattr__`` (wrappers.py:244), so calling them never goes through the call
#: tracker (wrappers.py:262); ``state_dict``/``load_state_dict`` are overridden to the original
#: module (wrappers.py:143-163).
FABRIC_MODULE_ATTRIBUTES = frozenset(
    {
        "T_destination",
        "add_module",
        "apply",
        "bfloat16",
        "buffers",
        "call_super_init",
        "children",
        "compile",
        "cpu",
        "cuda",
        "device",
        "double",
        "dtype",
        "dump_patches",
        "eval",
        "extra_repr",
        "float",
        "forward",
        "get_buffer",
        "get_extra_state",
        "get_parameter",
        "get_submodule",
        "half",
        "ipu",
        "load_state_dict",
        "mark_forward_method",
        "module",
        "modules",
        "mtia",
        "named_buffers",
        "named_children",
        "named_modules",
        "named_parameters",
        "parameters",
        "register_backward_hook",
        "register_buffer",
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_full_backward_hook",
        "register_full_backward_pre_hook",
        "register_load_state_dict_post_hook",
        "register_load_state_dict_pre_hook",
        "register_module",
        "register_parameter",
        "register_state_dict_post_hook",
        "register_state_dict_pre_hook",
        "requires_grad_",
        "set_extra_state",
        "set_submodule",
        "share_memory",
        "state_dict",
        "to",
        "to_empty",
        "train",
        "type",
        "xpu",
        "zero_grad",
    }
)
#: Methods of library model classes known to call the model itself (its ``__call__``, so the call
#: tracker's forward hook fires, wrappers.py:209-223): package prefix → method names. Hugging Face
#: ``GenerationMixin.generate`` runs ``outputs = self(**model_inputs, return_dict=True)`` at every
#: decoding step (transformers ``generation/utils.py``; Lightning issue #19495).
LIBRARY_METHODS_CALLING_MODEL: dict[str, frozenset[str]] = {"transformers.": frozenset({"generate"})}
#: A model compiled before setup: ``fabric.setup`` unwraps ``torch.compile`` and compiles the strategy's
#: module again (``_reapply_compile=True`` by default, fabric.py:272, 288-289; wrappers.py:348-365), so
#: ``_forward_module`` is an ``OptimizedModule`` and the call tracker is installed on every strategy,
#: a single device included (checked on CPU with lightning 2.6.6 and torch 2.13).
COMPILE_FUNCTIONS = ("torch.compile",)
#: Library calls that build a model of that library (``AutoModelForCausalLM.from_pretrained(...)``).
LIBRARY_MODEL_FACTORIES = ("from_pretrained", "from_config")
#: Base classes that make a class a ``torch.nn.Module`` (qualified-name prefixes; ``torch.nn.X``
#: classes are modules when ``X`` is capitalised).
MODULE_CLASS_PREFIXES = (
    "torch.nn.",
    "lightning.LightningModule",
    "lightning.pytorch.",
    "pytorch_lightning.",
    "transformers.",
)


def library_method_calls_model(qualname: str, method: str) -> bool:
    """Whether ``method`` of a model built by ``qualname`` (a class or its factory) calls the model."""
    return any(qualname.startswith(p) and method in names for p, names in LIBRARY_METHODS_CALLING_MODEL.items())


#: the classes whose ``from_pretrained``/``from_config`` build no module (Hugging Face's tokenizers,
#: configurations, processors and feature extractors, diffusers' schedulers and pipelines), by how
#: their names end (``BertTokenizer``, ``AutoTokenizer``, ``AutoConfig``, ``DDPMScheduler`` …)
NON_MODULE_FACTORY_OWNERS = (
    "Tokenizer",
    "TokenizerFast",
    "Config",
    "Processor",
    "FeatureExtractor",
    "Scheduler",
    "Pipeline",
)


def is_module_class_name(qualname: str) -> bool:
    """Whether ``qualname`` names a ``torch.nn.Module`` class (or a library model class/factory)."""
    parts = qualname.rsplit(".", 2)
    last = parts[-1]
    if qualname.startswith("torch.nn.") and not qualname.startswith("torch.nn.functional."):
        return last[:1].isupper()
    if last in LIBRARY_MODEL_FACTORIES:
        return len(parts) < 2 or not parts[-2].endswith(NON_MODULE_FACTORY_OWNERS)
    return qualname.startswith(MODULE_CLASS_PREFIXES[1:]) and last[:1].isupper()


#: ``DeepSpeedStrategy(stage=2)`` is the constructor's default (strategies/deepspeed.py).
DEEPSPEED_DEFAULT_STAGE = 2


def precision_plugin_requires_fabric_backward(cls: str | None) -> bool | None:
    """Whether a precision plugin class (or a subclass known here) makes ``loss.backward()`` raise;
    None for a class this table does not know."""
    seen = set()
    while cls is not None and cls not in seen:
        if cls in PRECISION_PLUGINS_REQUIRING_FABRIC_BACKWARD:
            return True
        seen.add(cls)
        entry = PLUGIN_CLASSES.get(cls)
        if entry is None:
            return None
        cls = entry.parent
    return False


def deepspeed_stage(strategy: object) -> int | None:
    """The ZeRO stage a DeepSpeed ``strategy`` argument gives: a registry name's stage (plain
    ``"deepspeed"``: the constructor's default), or a ``stage=`` constant of a constructor (an
    object with ``args``); None when not known (a constructor without a constant ``stage`` may
    pass a ``config`` that sets it)."""
    if isinstance(strategy, str):
        entry = STRATEGY_REGISTRY.get(strategy.lower())
        if entry is None or entry[0] != "DeepSpeedStrategy":
            return None
        stage = entry[1].get("stage", DEEPSPEED_DEFAULT_STAGE)
        return stage if isinstance(stage, int) else None
    args = dict(getattr(strategy, "args", ()) or ())
    stage = args.get("stage")
    return stage if isinstance(stage, int) else None


LATEST_LIGHTNING = "2.6.6"
#: The releases of Lightning (``pytorch-lightning``; ``lightning`` and ``lightning-fabric`` share
#: its 2.x numbers): the last patch of each minor release, oldest first, as PyPI lists them. A
#: project's declared version is the newest of these its requirements allow
#: (:mod:`fabric_lsp.declared_version`); the rules compare only major.minor, so a missing patch
#: release changes nothing. The last one is :data:`LATEST_LIGHTNING`.
KNOWN_LIGHTNING_RELEASES: tuple[str, ...] = (
    "0.7.6", "0.8.5", "0.9.0", "0.10.0",
    "1.0.8", "1.1.8", "1.2.10", "1.3.8", "1.4.9", "1.5.10", "1.6.5", "1.7.7", "1.8.6", "1.9.5",
    "2.0.9", "2.1.4", "2.2.5", "2.3.3", "2.4.0", "2.5.6", LATEST_LIGHTNING,
)  # fmt: skip
#: Feature → the first version that has it.
SINCE: dict[str, tuple[int, ...]] = {
    # `.backward()` on a set-up module's output raises unless `fabric.backward` is used (FAB004)
    "backward_check": (2, 3),
    # `_FabricModule.mark_forward_method` (FAB003's fix)
    "mark_forward_method": (2, 3),
    # calling a non-forward method of a wrapped module raises (2.0–2.1 only warn) (FAB003)
    "forward_redirection_error": (2, 2),
    # DeepSpeedPrecision accepts "bf16-true" (and "16-true")
    "deepspeed_bf16_true": (2, 1),
    # the epoch-end hooks and the last 1.x Trainer flags are removed (PL004; CHANGELOG 2.0.0; the
    # flags removed before: `REMOVED_TRAINER_ARGUMENTS`)
    "removed_1x_api": (2, 0),
    # PL002's three eras of the monitors (read in the 1.2.0, 1.2.10, 1.3.8, 1.4.9 and 1.9.0 wheels):
    # `EarlyStopping(strict=True)` raises at the end of a validation (not the sanity check) where its
    # key is not a callback metric (1.2.0 `callbacks/early_stopping.py:131,157`); PL002 judges
    # nothing older
    "early_stopping_strict_check": (1, 2),
    # the monitors see only what `self.log` logged: 1.3.0 removed `process_dict_result`, through
    # which a hook's returned `"log"`/`"progress_bar"` dict fed `callback_metrics`
    "monitors_see_logged_only": (1, 3),
    # the checks of 2.6.6: `ModelCheckpoint` raises once a validation ran, `EarlyStopping`'s
    # `check_on_train_epoch_end=None` (before: False) checks at the train epoch's end, the
    # `ReduceLROnPlateau` strict check, 2.x's `_step`/`_epoch` names (1.4.9)
    "monitor_checks_as_2x": (1, 4),
    # `load_from_checkpoint` on an instance raises TypeError (PL004; CHANGELOG 2.1.0, #18432)
    "restricted_load_from_checkpoint": (2, 1),
    # `LightningModule.hparams` has no setter (PL004; CHANGELOG 1.3.0, #6207)
    "no_hparams_setter": (1, 3),
}
#: What a precision plugin accepted before a release (feature of ``SINCE`` → accepted precisions):
#: DeepSpeedPrecision's ``_PRECISION_INPUT`` in 2.0.9 (``plugins/precision/deepspeed.py:31``);
#: 2.1.0 added "16-true" and "bf16-true".
PRECISION_ACCEPTED_BEFORE: dict[str, tuple[str, tuple[str, ...]]] = {
    "DeepSpeedPrecision": ("deepspeed_bf16_true", ("32-true", "16-mixed", "bf16-mixed")),
}


def version_tuple(version: str) -> tuple[int, ...]:
    """``"2.6.6"`` → ``(2, 6, 6)``; pre-release and local parts are dropped (``"2.3.0rc1"`` → ``(2, 3, 0)``)."""
    parts: list[int] = []
    for piece in version.strip().split(".")[:3]:
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def has_feature(feature: str, version: str | None = None) -> bool:
    """Whether Lightning ``version`` (default: the latest known) has ``feature`` (a key of ``SINCE``)."""
    return version_tuple(version or LATEST_LIGHTNING) >= SINCE[feature]


#: environment path -> (when read, version): the metadata is read at most every few seconds
_VERSION_CACHE: dict[str | None, tuple[float, str | None]] = {}
VERSION_TTL = 5.0


def remembered_installed() -> dict[str | None, tuple[float, str | None]]:
    """The installed versions read so far, by environment, each with when it was read (for
    :func:`recall_installed` in another process on this machine, forked or started later: the
    monotonic clock is the machine's)."""
    return dict(_VERSION_CACHE)


def recall_installed(versions: dict[str | None, tuple[float, str | None]]) -> None:
    """Take the installed versions another process read (:func:`remembered_installed`), each kept
    as long as it would have been there."""
    for environment, read in versions.items():
        _VERSION_CACHE.setdefault(environment, read)


#: the distributions whose version is "the Lightning version", first found first: the unified
#: package, Fabric's standalone one, the Trainer's standalone one (``pytorch_lightning``, whose
#: 1.x releases a Trainer project may still pin)
LIGHTNING_DISTRIBUTIONS = ("lightning", "lightning-fabric", "pytorch-lightning")


def installed_lightning_version(environment_path: str | None = None) -> str | None:
    """The version of ``lightning`` (or ``lightning-fabric``) installed in the given environment (a
    virtualenv folder or an interpreter inside one), else in the running interpreter — read from
    the package metadata, never by importing the package (at most every :data:`VERSION_TTL`
    seconds: a workspace check asks once per file)."""
    import time

    now = time.monotonic()
    cached = _VERSION_CACHE.get(environment_path)
    if cached is not None and now - cached[0] < VERSION_TTL:
        return cached[1]
    version = _read_lightning_version(environment_path)
    _VERSION_CACHE[environment_path] = (now, version)
    return version


def _read_lightning_version(environment_path: str | None) -> str | None:
    search = _site_packages(environment_path) if environment_path else None
    if environment_path and not search:
        return None
    if not _may_hold_distribution(search):
        return None
    from importlib import metadata  # ~20 ms to import: only where a distribution may be found

    for name in LIGHTNING_DISTRIBUTIONS:
        if search is None:
            try:
                return metadata.version(name)
            except metadata.PackageNotFoundError:
                continue
        for dist in metadata.distributions(path=search):
            if (dist.metadata["Name"] or "").lower().replace("_", "-") == name:
                return dist.version
    return None


def _may_hold_distribution(search: list[str] | None) -> bool:
    """Whether ``importlib.metadata`` may find one of :data:`LIGHTNING_DISTRIBUTIONS` in the
    folders ``search`` (None: ``sys.path``, through the finders of ``sys.meta_path``): False only
    where no folder holds a ``*.dist-info``/``*.egg-info``/``*.egg`` of theirs and, for
    ``sys.path``, no finder besides the standard path finder can list distributions."""
    import os
    import sys

    if search is None:
        from importlib.machinery import PathFinder

        if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
            return True
    wanted = {n.replace("-", "_") for n in LIGHTNING_DISTRIBUTIONS}
    for folder in sys.path if search is None else search:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            if os.path.isfile(folder):  # a zip file or an egg on the path: let importlib.metadata look
                return True
            continue
        for name in names:
            stem, dot, suffix = name.lower().rpartition(".")
            if dot and suffix in ("dist-info", "egg-info", "egg") and stem.split("-")[0].replace(".", "_") in wanted:
                return True
    return False


def _site_packages(environment_path: str) -> list[str]:
    import glob
    import os

    env = environment_path
    if os.path.isfile(env):  # .../bin/python
        env = os.path.dirname(os.path.dirname(env))
    return glob.glob(os.path.join(env, "lib", "python*", "site-packages")) + glob.glob(
        os.path.join(env, "Lib", "site-packages")
    )


#: Fabric's strategies that run only on TPUs (through torch_xla): code that names one means a TPU
#: machine even without ``accelerator="tpu"``.
XLA_STRATEGY_CLASSES = frozenset({"XLAStrategy", "XLAFSDPStrategy", "SingleDeviceXLAStrategy", "SingleTPUStrategy"})


def names_tpu_strategy(strategy: object) -> bool:
    """Whether a ``strategy=`` value (a registry name, or a class name) is one of the XLA family."""
    if isinstance(strategy, str):
        entry = STRATEGY_REGISTRY.get(strategy.strip().lower())
        return entry is not None and entry[0] in XLA_STRATEGY_CLASSES
    return False


# -- Joint setup: which strategies accept ``fabric.setup(model, optimizer)`` (FAB001's fix) ------
# Source: lightning/fabric 2.6.6 — ``Fabric._validate_setup``, ``FSDPStrategy.__init__`` and
# ``.setup_module_and_optimizers``, ``XLAFSDPStrategy.setup_module_and_optimizers``,
# ``ModelParallelStrategy`` (inherits ``Strategy.setup_module_and_optimizers``).

#: Why a strategy kind cannot take joint setup at all, under any arguments.
JOINT_SETUP_REFUSED: dict[Kind, str] = {
    Kind.XLA_FSDP: "raises NotImplementedError: it does not support the joint setup of module and optimizer(s)",
    Kind.MODEL_PARALLEL: (
        "keeps the optimizer on the original parameters under joint setup, so training silently changes no weights"
    ),
}

#: Kinds whose joint setup cannot be told: a project's own subclass of ``Strategy`` /
#: ``ParallelStrategy`` may override ``setup_module_and_optimizers`` in any way.
JOINT_SETUP_UNDECIDED = frozenset({Kind.BASE})

#: Constructor arguments under which a kind refuses joint setup: kind → argument → (the values
#: that refuse, compared with ``is`` as Lightning does, the default, why).
JOINT_SETUP_REFUSING_ARGUMENTS: dict[Kind, dict[str, tuple[tuple[object, ...], object, str]]] = {
    Kind.FSDP: {
        # __init__: ``self._fsdp_kwargs.setdefault("use_orig_params", True)``;
        # setup_module_and_optimizers: ``if use_orig_params is False: raise ValueError(...)``
        "use_orig_params": ((False,), True, "raises ValueError on joint setup with `use_orig_params=False`"),
    },
}

#: A constructor argument given in a form whose value is not known statically (a variable, ``**kwargs``).
NOT_KNOWN = object()

#: Kinds whose joint setup raises when an optimizer references meta-device parameters:
#: ``_validate_setup`` checks ``isinstance(self._strategy, FSDPStrategy)`` (separate setup
#: materializes the model in ``setup_module`` before the optimizer is built).
META_PARAMETERS_REFUSE_JOINT_SETUP = frozenset({Kind.FSDP})


def strategy_arguments_of_interest(kind: Kind | None) -> tuple[str, ...]:
    """The constructor arguments of ``kind`` that decide whether it accepts joint setup."""
    return tuple(JOINT_SETUP_REFUSING_ARGUMENTS.get(kind, {})) if kind is not None else ()


def joint_setup_refusal(kind: Kind | None, arguments: dict[str, tuple[object, ...] | None]) -> str | None:
    """Why a strategy of ``kind`` built with ``arguments`` (argument → its possible constant values,
    None when not known statically; an argument not given takes its default) refuses joint setup,
    or None when it accepts it or that cannot be told (see :func:`joint_setup_known`)."""
    if kind is None:
        return None
    if kind in JOINT_SETUP_REFUSED:
        return JOINT_SETUP_REFUSED[kind]
    for name, (refusing, default, why) in JOINT_SETUP_REFUSING_ARGUMENTS.get(kind, {}).items():
        values = arguments.get(name, (default,))
        if values is not None and any(v is r for v in values for r in refusing):
            return why
    return None


def joint_setup_known(kind: Kind | None, arguments: dict[str, tuple[object, ...] | None]) -> bool:
    """Whether it is known statically if ``kind`` built with ``arguments`` accepts joint setup."""
    if kind is None or kind in JOINT_SETUP_UNDECIDED:
        return False
    return all(arguments.get(name, ()) is not None for name in strategy_arguments_of_interest(kind))


# -- FAB009: joint ``fabric.setup(model, optimizer)`` where the strategy needs separate setup ----
# The same knowledge as above, read from the other side: which kinds *fail* on joint setup, how
# (raises, or trains nothing), and the message Lightning 2.6.6 gives, with its place.


class JointSetupFailure(NamedTuple):
    """How ``setup(model, optimizer)`` fails under one strategy."""

    raises: bool  # False: it returns, and training silently changes no weights
    why: str  # for a message: "raises …" / "keeps the optimizer on …"
    lightning_message: str
    where: str  # lightning/fabric 2.6.6 file:line


#: Kinds that refuse joint setup under any arguments (``JOINT_SETUP_REFUSED``), with Lightning's message.
JOINT_SETUP_FAILURES: dict[Kind, JointSetupFailure] = {
    Kind.XLA_FSDP: JointSetupFailure(
        True,
        JOINT_SETUP_REFUSED[Kind.XLA_FSDP],
        "The `XLAFSDPStrategy` does not support the joint setup of module and optimizer(s). Please do it in this "
        "order: Create the model, call `setup_module`, create the optimizer, call `setup_optimizer`.",
        "strategies/xla_fsdp.py:203",
    ),
    # ModelParallelStrategy does not override ``Strategy.setup_module_and_optimizers``
    # (strategy.py:150-161): ``setup_module`` runs ``parallelize_fn`` (model_parallel.py:185), which
    # (``fully_shard``, ``parallelize_module``) replaces the parameters the optimizer holds.
    Kind.MODEL_PARALLEL: JointSetupFailure(
        False,
        JOINT_SETUP_REFUSED[Kind.MODEL_PARALLEL],
        "(no error: the optimizer keeps the parameters from before `parallelize_fn`)",
        "strategies/strategy.py:159, strategies/model_parallel.py:185",
    ),
}

#: ``FSDPStrategy(use_orig_params=False)`` on joint setup (``setup_module_and_optimizers``).
FSDP_ORIG_PARAMS_FAILURE = JointSetupFailure(
    True,
    JOINT_SETUP_REFUSING_ARGUMENTS[Kind.FSDP]["use_orig_params"][2],
    "You set `FSDPStrategy(use_orig_params=False)` but this is not supported when setting the model and "
    "optimizer up jointly. Either set it to `True` or set the objects up in this order: Create the model, call "
    "`setup_module`, create the optimizer, call `setup_optimizer`.",
    "strategies/fsdp.py:271",
)

#: An optimizer over meta-device parameters under FSDP (``Fabric._validate_setup``:
#: ``isinstance(self._strategy, FSDPStrategy) and any(_has_meta_device_parameters_or_buffers(o) …)``).
META_PARAMETERS_FAILURE = JointSetupFailure(
    True,
    "raises RuntimeError on joint setup of an optimizer over meta-device parameters",
    "The optimizer has references to the model's meta-device parameters. Materializing them is is currently not "
    "supported unless you to set up the model and optimizer(s) separately. Create and set up the model first "
    "through `model = fabric.setup_module(model)`. Then create the optimizer and set it up: "
    "`optimizer = fabric.setup_optimizers(optimizer)`.",
    "fabric.py:1211",
)


def joint_setup_failure(
    kind: Kind | None, arguments: dict[str, tuple[object, ...] | None], meta_parameters: bool = False
) -> JointSetupFailure | None:
    """How joint setup fails under a strategy of ``kind`` built with ``arguments``, when the
    optimizer may hold meta-device parameters or not; None when it works or cannot be told."""
    if kind is None:
        return None
    if kind in JOINT_SETUP_FAILURES:
        return JOINT_SETUP_FAILURES[kind]
    if kind is Kind.FSDP and joint_setup_refusal(kind, arguments) is not None:
        return FSDP_ORIG_PARAMS_FAILURE
    if meta_parameters and kind in META_PARAMETERS_REFUSE_JOINT_SETUP:
        return META_PARAMETERS_FAILURE
    return None


# --------------------------------------------------------------------------------------------------
# FAB008: which ``Fabric(...)`` argument each configuration error is about.
# --------------------------------------------------------------------------------------------------


class ConfigCheck(NamedTuple):
    """One check ``Fabric(...)`` makes before anything runs (the connector at construction, the
    strategy's ``setup_environment`` at launch): how its message starts, the arguments it is about
    (every argument it reads; the first one the code writes is where FAB008 reports), and its
    place in the 2.6.6 source."""

    pattern: str  # a regular expression matched at the start of Lightning's message
    arguments: tuple[str, ...]
    where: str
    #: the check depends on the machine (devices present, torch_xla installed, the platform), which
    #: static analysis does not know: a configuration failing it is not judged
    machine: bool = False


CONFIG_CHECKS: tuple[ConfigCheck, ...] = (
    ConfigCheck(r"You selected an invalid strategy name", ("strategy",), "connector.py:192"),
    ConfigCheck(r"You selected an invalid accelerator name", ("accelerator",), "connector.py:204"),
    ConfigCheck(r"You set `strategy=.*MPS accelerator", ("strategy", "accelerator"), "connector.py:218"),
    ConfigCheck(r"Found invalid type for plugin", ("plugins",), "connector.py:240"),
    ConfigCheck(r"Received multiple values for", ("plugins",), "connector.py:247"),
    ConfigCheck(r"Received both `precision=", ("precision", "plugins"), "connector.py:253"),
    ConfigCheck(r"accelerator set through both strategy class", ("accelerator", "strategy"), "connector.py:265"),
    ConfigCheck(r"precision set through both strategy class", ("plugins", "strategy"), "connector.py:270"),
    ConfigCheck(r"checkpoint_io set through both strategy class", ("plugins", "strategy"), "connector.py:274"),
    ConfigCheck(r"cluster_environment set through both", ("plugins", "strategy"), "connector.py:278"),
    ConfigCheck(r"(CPU|GPU) parallel_devices set through", ("accelerator", "strategy"), "connector.py:284"),
    ConfigCheck(r"`num_nodes` must be a positive integer", ("num_nodes",), "connector.py:300"),
    ConfigCheck(r"invalid literal for int\(\)", ("num_nodes",), "connector.py:113"),
    ConfigCheck(r"`Fabric\(devices=", ("devices",), "connector.py:311"),
    ConfigCheck(r"No supported gpu backend found", ("accelerator",), "connector.py:333", machine=True),
    ConfigCheck(r"`\w+` can not run on your system", ("accelerator",), "connector.py:349", machine=True),
    ConfigCheck(r"`devices` selected with `CPUAccelerator`", ("devices", "accelerator"), "accelerators/cpu.py:99"),
    ConfigCheck(
        r"GPUs requested but none are available",
        ("devices", "accelerator"),
        "utilities/device_parser.py:89",
        machine=True,
    ),
    ConfigCheck(r"You requested gpu:", ("devices", "accelerator"), "utilities/device_parser.py:136", machine=True),
    ConfigCheck(r"Device ID's \(GPU\) must be unique", ("devices", "accelerator"), "utilities/device_parser.py:183"),
    ConfigCheck(r"Device IDs \(GPU/TPU\) must be", ("devices", "accelerator"), "utilities/device_parser.py:197"),
    ConfigCheck(r"`devices` can only be 'auto'", ("devices", "accelerator"), "accelerators/xla.py:166", machine=True),
    ConfigCheck(r"Could not parse the selected TPU devices", ("devices", "accelerator"), "accelerators/xla.py:179"),
    ConfigCheck(
        r"Requirement 'torch_xla", ("accelerator", "strategy", "plugins"), "accelerators/xla.py:35", machine=True
    ),
    ConfigCheck(r"You selected `Fabric\(strategy=.*forking", ("strategy",), "connector.py:429", machine=True),
    ConfigCheck(r"You selected the FSDP strategy", ("strategy", "accelerator"), "connector.py:436"),
    ConfigCheck(r"Bitsandbytes is only supported", ("plugins", "accelerator"), "connector.py:457"),
    ConfigCheck(r"The `ModelParallelStrategy` does not support", ("precision", "strategy"), "connector.py:467"),
    ConfigCheck(
        r"`precision=.*is not supported in DeepSpeed", ("precision", "strategy"), "plugins/precision/deepspeed.py:49"
    ),
    ConfigCheck(r"`precision=.*is not supported in FSDP", ("precision", "strategy"), "plugins/precision/fsdp.py:56"),
    ConfigCheck(
        r"`precision=.*is not supported in XLA", ("precision", "strategy", "accelerator"), "plugins/precision/xla.py:44"
    ),
    ConfigCheck(r"No precision set", ("precision", "strategy", "accelerator"), "connector.py:498"),
    ConfigCheck(r"`Fabric\(strategy=.*interactive environment", ("strategy",), "connector.py:523", machine=True),
    ConfigCheck(r"The `XLAAccelerator` can only be used", ("strategy", "accelerator"), "connector.py:536"),
    ConfigCheck(r"Precision .* is invalid", ("precision",), "connector.py:565"),
    ConfigCheck(r"\w+\.__init__\(\) missing 1 required", ("strategy",), "strategies/single_xla.py:31"),
    ConfigCheck(
        r"The .* strategy can only work with the `", ("plugins", "precision", "strategy"), "strategies/fsdp.py:243"
    ),
    ConfigCheck(
        r"The `\w+` does not support setting a `CheckpointIO`", ("plugins", "strategy"), "strategies/fsdp.py:192"
    ),
    ConfigCheck(
        r"The XLA strategy can only work with the `XLACheckpointIO`", ("plugins", "strategy"), "strategies/xla.py:88"
    ),
    ConfigCheck(r"The start method '", ("strategy",), "strategies/launchers/multiprocessing.py:71", machine=True),
    # ``setup_environment`` at launch (engine/lightning/launch_checks.py)
    ConfigCheck(
        r"The DeepSpeed strategy is only supported on CUDA GPUs",
        ("accelerator", "strategy"),
        "strategies/deepspeed.py:641",
    ),
    ConfigCheck(r"The selected device indices", ("devices", "strategy", "accelerator"), "strategies/deepspeed.py:881"),
    ConfigCheck(
        r"You passed in a path to a DeepSpeed config but the path does not exist",
        ("strategy",),
        "strategies/deepspeed.py:834",
    ),
    ConfigCheck(
        r"The sizes `data_parallel_size=",
        ("strategy", "devices", "num_nodes", "accelerator"),
        "strategies/model_parallel.py:514",
    ),
)

#: Lightning's warnings that change the configuration the code asked for (FAB008 reports them as
#: warnings): message start → (argument, place in the 2.6.6 source).
CONFIG_WARNINGS: tuple[ConfigCheck, ...] = (
    ConfigCheck(r"`precision=.*is supported for historical reasons", ("precision",), "connector.py:571"),
    ConfigCheck(
        r"You passed `Fabric\(accelerator='cpu', precision='16-mixed'\)`",
        ("precision", "accelerator"),
        "connector.py:483",
    ),
    ConfigCheck(r"'dp' is not supported on CPUs", ("strategy", "accelerator"), "connector.py:426"),
)
#: What ``precision="16-mixed"`` becomes on CPU (``connector.py:483``).
CPU_FP16_FALLBACK = "bf16-mixed"


def config_check(message: str, table: tuple[ConfigCheck, ...] = CONFIG_CHECKS) -> ConfigCheck | None:
    """The check in ``table`` whose message ``message`` is."""
    return next((c for c in table if re.match(c.pattern, message)), None)


#: Accelerator names ``Fabric`` accepts besides the registry's.
ACCELERATOR_EXTRA_NAMES = ("auto", "gpu")
#: DeepSpeed runs only on CUDA (``DeepSpeedStrategy.setup_environment``).
CUDA_ONLY_STRATEGIES = ("DeepSpeedStrategy",)
#: Strategies whose processes take their device by local rank: the indices must be ``0..n-1``.
RANK_INDEXED_DEVICE_STRATEGIES = ("DeepSpeedStrategy",)
#: Strategies that read a JSON config file given by path at construction, and the argument
#: (``DeepSpeedStrategy._load_config``, ``strategies/deepspeed.py:828``).
CONFIG_FILE_ARGUMENTS = {"DeepSpeedStrategy": "config"}
#: ``ModelParallelStrategy``'s size arguments, in constructor order after ``parallelize_fn``.
MODEL_PARALLEL_SIZES = ("data_parallel_size", "tensor_parallel_size")


# -- checkpoints: Fabric.save / Fabric.load / Fabric.load_raw (FAB006) ---------------------------
#: ``Fabric.save(path, state, filter=None)`` (``fabric.py:820-825``); its filter checks, in order:
#: not a dict (``fabric.py:858``), keys not in the state (``fabric.py:860``), a value that is not
#: callable (``fabric.py:865``). Swapped arguments reach ``state.items()`` on the path
#: (``strategies/strategy.py:410``: ``AttributeError: 'str' object has no attribute 'items'``).
SAVE_PARAMETERS = ("path", "state", "filter")
LOAD_PARAMETERS = ("path", "state", "strict")  # ``fabric.py:869-876``
LOAD_RAW_PARAMETERS = ("path", "obj", "strict")  # ``fabric.py:926-933``
SAVE_FILTER_ERRORS = {
    "not_dict": ("TypeError: Filter should be a dictionary, given {filter!r}", "fabric.py:858"),
    "missing_keys": (
        "ValueError: The filter keys {missing} are not present in the state keys {keys}.",
        "fabric.py:860",
    ),
    "not_callable": (
        "TypeError: Expected `fabric.save(filter=...)` for key {key!r} to be a callable, given {value!r}",
        "fabric.py:865",
    ),
}
SWAPPED_SAVE_ERROR = ("AttributeError: 'str' object has no attribute 'items'", "strategies/strategy.py:410")


class CheckpointFacts(NamedTuple):
    """How a strategy that saves and loads through its set-up model treats ``Fabric.save``/``load``."""

    label: str  # the name Lightning's messages use
    model_word: str  # "DeepSpeed model", "FSDP model" …: what the state must hold exactly one of
    multiple_word: str  # how "Found multiple …" names them
    #: ``save(filter=...)`` raises: always (None) or when the constructor argument has one of the
    #: values (argument, its default, the rejected values)
    filter_rejected_when: tuple[str, object, tuple[object, ...]] | None
    filter_error: str | None  # None: ``filter=`` is accepted
    filter_where: str | None
    model_where: tuple[str, str]  # the "Could not find …" / "Found multiple …" raises (save, load)
    load_state_where: str  # ``load(path)`` without a state
    #: ``load_raw(path, obj)`` raises for an optimizer ("optimizer") or for any object ("any");
    #: None: it is accepted
    load_raw_rejects: str | None
    load_raw_error: str | None
    load_raw_where: str | None


#: The strategies whose ``save_checkpoint``/``load_checkpoint`` need the set-up model in the state
#: (Lightning 2.6.6; class name → facts). Other strategies (single device, DP, DDP, XLA) save and load
#: any dict through ``Strategy.save_checkpoint``/``load_checkpoint`` (``strategies/strategy.py:260,308``).
CHECKPOINT_STRATEGIES: dict[str, CheckpointFacts] = {
    "DeepSpeedStrategy": CheckpointFacts(
        "DeepSpeedStrategy",
        "DeepSpeed model",
        "DeepSpeed engine modules",
        None,
        "TypeError: `DeepSpeedStrategy.save_checkpoint(..., filter=...)` is not supported because "
        "`DeepSpeedStrategy` manages the state serialization internally.",
        "strategies/deepspeed.py:433-437",
        ("strategies/deepspeed.py:440-451", "strategies/deepspeed.py:513-524"),
        "strategies/deepspeed.py:504-509",
        None,
        None,
        None,
    ),
    "FSDPStrategy": CheckpointFacts(
        "FSDPStrategy",
        "FSDP model",
        "FSDP models",
        ("state_dict_type", "sharded", ("sharded",)),
        "NotImplementedError: FSDP doesn't support loading sharded filtered checkpoints, so saving them is disabled.",
        "strategies/fsdp.py:434-438",
        ("strategies/fsdp.py:448-459", "strategies/fsdp.py:546-558"),
        "strategies/fsdp.py:522-527",
        "optimizer",
        "NotImplementedError: Loading a single optimizer object from a checkpoint is not supported yet with the FSDP strategy.",
        "strategies/fsdp.py:537-540",
    ),
    "ModelParallelStrategy": CheckpointFacts(
        "ModelParallelStrategy",
        "distributed model",
        "distributed models",
        ("save_distributed_checkpoint", True, (True,)),
        "NotImplementedError: ModelParallelStrategy doesn't support loading distributed filtered checkpoints, "
        "so saving them is disabled.",
        "strategies/model_parallel.py:256-261",
        ("strategies/model_parallel.py:360-371", "strategies/model_parallel.py:425-437"),
        "strategies/model_parallel.py:281-286",
        "optimizer",
        "NotImplementedError: Loading a single optimizer object from a checkpoint is not supported yet with "
        "ModelParallelStrategy.",
        "strategies/model_parallel.py:294-297",
    ),
    "XLAFSDPStrategy": CheckpointFacts(
        "XLAFSDPStrategy",
        "XLAFSDP model",
        "XLAFSDP modules",
        None,
        None,
        None,
        ("strategies/xla_fsdp.py:431-442", "strategies/xla_fsdp.py:549-558"),
        "strategies/xla_fsdp.py:527-532",
        "any",
        "NotImplementedError: Loading a single module or optimizer object from a checkpoint is not supported yet "
        "with the XLAFSDP strategy.",
        "strategies/xla_fsdp.py:537-541",
    ),
}
#: ``DeepSpeedStrategy.load_checkpoint`` takes the plain ``Strategy`` path (any state, or none) when
#: ``load_full_weights=True`` at ZeRO stage 3 (``strategies/deepspeed.py:498-502``).
DEEPSPEED_FULL_WEIGHTS = ("load_full_weights", False)
#: Keys of DeepSpeed's engine state: a user key among them (other than the engine and its optimizer,
#: which Lightning removes first) is warned about at ``save`` (``strategies/deepspeed.py:850-873``,
#: ``rank_zero_warn``; called from ``save_checkpoint``, ``deepspeed.py:464``).
DEEPSPEED_INTERNAL_KEYS = frozenset(
    {
        "module",
        "buffer_names",
        "optimizer",
        "param_shapes",
        "lr_scheduler",
        "sparse_tensor_module_names",
        "skipped_steps",
        "global_steps",
        "global_samples",
        "dp_world_size",
        "mp_world_size",
        "ds_config",
        "ds_version",
    }
)
DEEPSPEED_KEYS_WARNING = (
    "UserWarning: Your state has keys that collide with DeepSpeed's internal engine state. This could result in "
    "your values being overwritten by DeepSpeed. Consider changing the name of these keys to something else: {keys}"
)


def strategy_argument(strategy: object, name: str, default: object) -> object:
    """The value a ``strategy`` argument of ``Fabric`` gives its constructor argument ``name``: a
    registry name's (or the constructor's ``default``), a constant keyword of a constructor call;
    ``NOT_KNOWN`` when it is not known (not a constant, ``**`` unpacking, positional arguments, a
    user's subclass whose ``__init__`` may pass anything)."""
    if isinstance(strategy, str):
        entry = STRATEGY_REGISTRY.get(strategy.strip().lower())
        return NOT_KNOWN if entry is None else entry[1].get(name, default)
    if getattr(strategy, "base", None) is not None:
        return NOT_KNOWN
    unknown = getattr(strategy, "unknown", ())
    if name in unknown or "*" in unknown:
        return NOT_KNOWN
    return dict(getattr(strategy, "args", ()) or ()).get(name, default)


# --------------------------------------------------------------------------------------------------
# FAB010: batch-job scripts (SLURM, torchrun, ``fabric run``) and what the launched process sees.
# Source: lightning/fabric 2.6.6 ``plugins/environments/slurm.py``, ``plugins/environments/torchelastic.py``,
# ``strategies/launchers/subprocess_script.py``, ``connector.py``, ``cli.py``.
# --------------------------------------------------------------------------------------------------

#: Where each check is made (``lightning/fabric/`` + this).
SLURM_DEVICES_CHECK = "plugins/environments/slurm.py:163"  # SLURMEnvironment.validate_settings
SLURM_NODES_CHECK = "plugins/environments/slurm.py:169"
SLURM_NTASKS_CHECK = "plugins/environments/slurm.py:221"  # _validate_srun_variables, in SLURMEnvironment.__init__
SLURM_NTASKS_MESSAGE_START = "You set `--ntasks="
SLURM_SRUN_WARNING = "plugins/environments/slurm.py:204"  # _validate_srun_used: a warning when srun exists
#: SLURMEnvironment creates no processes (``:58``) and takes the world size from ``SLURM_NTASKS`` (``:135``)
SLURM_WORLD_SIZE = "plugins/environments/slurm.py:135"
TORCHELASTIC_WORLD_CHECK = "plugins/environments/torchelastic.py:90"  # TorchElasticEnvironment.validate_settings
#: ``validate_settings`` runs only in ``_SubprocessScriptLauncher.launch`` (``subprocess_script.py:102``): DDP
#: (and DeepSpeed, a DDP subclass) with ``start_method="popen"`` always has that launcher
#: (``strategies/ddp.py:113``); FSDP and ModelParallel have none when the cluster creates the processes
#: (``strategies/fsdp.py:249``, ``strategies/model_parallel.py:160``), so nothing is validated for them.
VALIDATE_SETTINGS_CALL = "strategies/launchers/subprocess_script.py:102"
#: ``Your code has `Fabric(...)` but it conflicts with the value `--...` set through the CLI``
CLI_CONFLICT_CHECK = "connector.py:549"

#: ``sbatch``/``srun`` options the checks read: spelling → canonical name
SLURM_OPTIONS = {
    "--nodes": "nodes",
    "-N": "nodes",
    "--ntasks": "ntasks",
    "-n": "ntasks",
    "--ntasks-per-node": "ntasks_per_node",
    "--job-name": "job_name",
    "-J": "job_name",
}
#: ``torchrun`` (``torch.distributed.run``) options: spelling → canonical name. Defaults:
#: ``--nproc-per-node=1``, ``--nnodes=1:1``; ``--standalone`` means one node.
TORCHRUN_OPTIONS = {
    "--nproc-per-node": "nproc_per_node",
    "--nproc_per_node": "nproc_per_node",
    "--nnodes": "nnodes",
}
#: torchrun options that take no value
TORCHRUN_FLAGS = ("--standalone", "--no-python", "--no_python", "--run-path", "--run_path", "--module", "-m")
TORCHRUN_MODULES = ("torch.distributed.run", "torch.distributed.launch")
#: ``fabric run`` options (``cli.py:66-100``): spelling → the ``LT_*`` variable it sets
#: (``cli.py:177-185``); ``--devices`` defaults to ``"1"`` and ``--num-nodes`` to ``1``, both always set.
FABRIC_RUN_OPTIONS = {
    "--accelerator": "LT_ACCELERATOR",
    "--strategy": "LT_STRATEGY",
    "--devices": "LT_DEVICES",
    "--num-nodes": "LT_NUM_NODES",
    "--num_nodes": "LT_NUM_NODES",
    "--precision": "LT_PRECISION",
}
FABRIC_RUN_DEFAULTS = {"LT_DEVICES": "1", "LT_NUM_NODES": "1"}
#: the batch-script file names the CLI checks and the server analyses
BATCH_SCRIPT_SUFFIXES = (".sh", ".sbatch", ".slurm")
#: a Jupyter notebook's file name ends so, in any case (the engine knows a notebook's program by it)
NOTEBOOK_SUFFIX = ".ipynb"


def slurm_devices_message(devices: int, ntasks_per_node: str) -> str:
    return (
        f"You set `devices={devices}` in Lightning, but the number of tasks per node configured in SLURM"
        f" `--ntasks-per-node={ntasks_per_node}` does not match. HINT: Set `devices={ntasks_per_node}`."
    )


def slurm_nodes_message(num_nodes: int, nnodes: str) -> str:
    return (
        f"You set `num_nodes={num_nodes}` in Lightning, but the number of nodes configured in SLURM"
        f" `--nodes={nnodes}` does not match. HINT: Set `num_nodes={nnodes}`."
    )


def torchelastic_world_message(devices: int, num_nodes: int, world_size: int) -> str:
    return (
        f"You set `devices={devices}` and `num_nodes={num_nodes}` in Lightning, but the product"
        f" ({devices} * {num_nodes}) does not match the world size ({world_size})."
    )


# --------------------------------------------------------------------------------------------------
# The Trainer's accelerator connector (``lightning/pytorch/trainer/connectors/accelerator_connector.py``)
# as data, for ``engine/lightning/trainer.py``. Checked against the real 2.6.6 connector by
# ``scripts/gen_trainer_connector_table.py``. The Trainer shares Fabric's device parsers, cluster
# environments and checkpoint IO classes (the same class objects), not its strategies, accelerators
# or precision plugins (``lightning.pytorch`` classes of the same names).
# --------------------------------------------------------------------------------------------------

#: ``StrategyRegistry`` of the Trainer 2.6.6: name → (class, ``start_method``). No ``dp``, no
#: ``xla_fsdp`` (removed in 2.0 / Fabric only); ``single_xla``/``single_tpu`` are registered without
#: the ``device`` they need.
TRAINER_STRATEGY_REGISTRY: dict[str, tuple[str, str]] = {
    **{
        name: ("DDPStrategy", method)
        for name, method in (
            ("ddp", "popen"),
            ("ddp_spawn", "spawn"),
            ("ddp_fork", "fork"),
            ("ddp_notebook", "fork"),
        )
    },
    **{
        f"{name}_find_unused_parameters_{flag}": ("DDPStrategy", method)
        for name, method in (
            ("ddp", "popen"),
            ("ddp_spawn", "spawn"),
            ("ddp_fork", "fork"),
            ("ddp_notebook", "fork"),
        )
        for flag in ("false", "true")
    },
    **{
        name: ("DeepSpeedStrategy", "popen")
        for name in (
            "deepspeed",
            "deepspeed_stage_1",
            "deepspeed_stage_2",
            "deepspeed_stage_2_offload",
            "deepspeed_stage_3",
            "deepspeed_stage_3_offload",
            "deepspeed_stage_3_offload_nvme",
        )
    },
    "fsdp": ("FSDPStrategy", "popen"),
    "fsdp_cpu_offload": ("FSDPStrategy", "popen"),
    "single_device": ("SingleDeviceStrategy", "popen"),
    "single_xla": ("SingleDeviceXLAStrategy", "popen"),
    "xla_debug": ("XLAStrategy", "popen"),
    "xla": ("XLAStrategy", "popen"),
    "single_tpu": ("SingleTPUStrategy", "popen"),
}
#: ``_DDP_FORK_ALIASES`` (``lightning/pytorch/strategies/ddp.py``): every fork-started registry name.
TRAINER_DDP_FORK_ALIASES = tuple(
    n for n, (c, m) in TRAINER_STRATEGY_REGISTRY.items() if c == "DDPStrategy" and m == "fork"
)
TRAINER_FSDP_ALIASES = ("fsdp", "fsdp_cpu_offload")


class TrainerStrategyClass(NamedTuple):
    module: str
    parent: str | None
    #: "ddp" (a launcher by start method, always), "script" (a subprocess launcher unless the cluster
    #: creates the processes), "xla", "none"
    launcher: str
    #: the precision plugin the ``precision_plugin`` setter insists on, and the setter's ``file:line``
    precision_plugin: tuple[str, str] | None = None
    #: the ``checkpoint_io`` setter's rule: ``file:line`` of an XLA-only setter, or None (any)
    xla_checkpoint_io: str | None = None
    #: what ``StrategyRegistry.get`` needs and lacks: the class whose ``__init__`` raises, its
    #: argument, and the ``file:line`` that calls it
    required_argument: tuple[str, str, str] | None = None
    #: ``file:line`` raising ModuleNotFoundError without torch_xla (its constructor)
    needs_xla: str | None = None
    own_cluster_environment: str | None = None
    default_device: str | None = None  # the constructor's default ``device``


_T = "lightning.pytorch.strategies."
_TS = "lightning/pytorch/strategies/"
TRAINER_STRATEGY_CLASS_FACTS: dict[str, TrainerStrategyClass] = {
    "Strategy": TrainerStrategyClass(_T + "strategy", None, "none"),
    "ParallelStrategy": TrainerStrategyClass(_T + "parallel", "Strategy", "none"),
    # ``device="cpu"`` by default: ``strategy="single_device"`` runs on the CPU whatever the accelerator
    "SingleDeviceStrategy": TrainerStrategyClass(_T + "single_device", "Strategy", "none", default_device="cpu"),
    "SingleDeviceXLAStrategy": TrainerStrategyClass(
        _T + "single_xla",
        "SingleDeviceStrategy",
        "none",
        ("XLAPrecision", _TS + "single_xla.py:88"),
        _TS + "single_xla.py:72",
        ("SingleDeviceXLAStrategy", "device", "lightning/fabric/strategies/registry.py:94"),
        needs_xla=_TS + "single_xla.py:45",
    ),
    "SingleTPUStrategy": TrainerStrategyClass(
        "lightning.pytorch._graveyard.tpu",
        "SingleDeviceXLAStrategy",
        "none",
        ("XLAPrecision", _TS + "single_xla.py:88"),
        _TS + "single_xla.py:72",
        ("SingleDeviceXLAStrategy", "device", "lightning/pytorch/_graveyard/tpu.py:44"),
        needs_xla=_TS + "single_xla.py:45",
    ),
    "DDPStrategy": TrainerStrategyClass(_T + "ddp", "ParallelStrategy", "ddp"),
    "DeepSpeedStrategy": TrainerStrategyClass(_T + "deepspeed", "DDPStrategy", "ddp"),
    "FSDPStrategy": TrainerStrategyClass(
        _T + "fsdp", "ParallelStrategy", "script", ("FSDPPrecision", _TS + "fsdp.py:232")
    ),
    "ModelParallelStrategy": TrainerStrategyClass(_T + "model_parallel", "ParallelStrategy", "script"),
    # a DDPStrategy subclass in the Trainer, with a launcher of its own
    "XLAStrategy": TrainerStrategyClass(
        _T + "xla",
        "DDPStrategy",
        "xla",
        ("XLAPrecision", _TS + "xla.py:102"),
        _TS + "xla.py:86",
        needs_xla=_TS + "xla.py:60",
        own_cluster_environment="XLAEnvironment",
    ),
}
TRAINER_STRATEGIES_WITH_NUM_NODES = ("DDPStrategy", "FSDPStrategy", "ModelParallelStrategy")

#: The Trainer's accelerators (``lightning.pytorch.accelerators``): class → module. The registry's
#: names are Fabric's (``ACCELERATOR_REGISTRY``).
TRAINER_ACCELERATOR_MODULES: dict[str, str] = {
    "Accelerator": "lightning.pytorch.accelerators.accelerator",
    "CPUAccelerator": "lightning.pytorch.accelerators.cpu",
    "CUDAAccelerator": "lightning.pytorch.accelerators.cuda",
    "MPSAccelerator": "lightning.pytorch.accelerators.mps",
    "XLAAccelerator": "lightning.pytorch.accelerators.xla",
    "TPUAccelerator": "lightning.pytorch._graveyard.tpu",
}

_TP = "lightning.pytorch.plugins."
#: The Trainer's plugins: its own precision plugins and layer syncs; Fabric's cluster environments
#: and checkpoint IO (``PLUGIN_CLASSES``, the same classes) are accepted as they are.
TRAINER_PLUGIN_CLASSES: dict[str, PluginClass] = {
    "Precision": PluginClass(_TP + "precision.precision", "Precision", "32-true"),
    "DoublePrecision": PluginClass(_TP + "precision.double", "Precision", "64-true", "Precision"),
    "HalfPrecision": PluginClass(_TP + "precision.half", "Precision", "16-true", "Precision"),
    "MixedPrecision": PluginClass(_TP + "precision.amp", "Precision", None, "Precision"),
    "DeepSpeedPrecision": PluginClass(_TP + "precision.deepspeed", "Precision", None, "Precision"),
    "FSDPPrecision": PluginClass(_TP + "precision.fsdp", "Precision", None, "Precision"),
    # built from an argument (``PRECISION_FROM_ARGUMENT``), whose default is "32-true" here
    "XLAPrecision": PluginClass(_TP + "precision.xla", "Precision", "32-true", "Precision"),
    "BitsandbytesPrecision": PluginClass(_TP + "precision.bitsandbytes", "Precision", "32-true", "Precision"),
    "TransformerEnginePrecision": PluginClass(
        _TP + "precision.transformer_engine", "Precision", "transformer-engine", "Precision"
    ),
    "AsyncCheckpointIO": PluginClass(_TP + "io.async_plugin", "CheckpointIO", parent="CheckpointIO"),
    "LayerSync": PluginClass(_TP + "layer_sync", "LayerSync"),
    "TorchSyncBatchNorm": PluginClass(_TP + "layer_sync", "LayerSync", parent="LayerSync"),
    **{name: p for name, p in PLUGIN_CLASSES.items() if p.category in ("CheckpointIO", "ClusterEnvironment")},
}
#: The precision each strategy's own plugin accepts when built from ``precision=``: plugin →
#: (the ``file:line`` of the check, the message before ``precision`` must be one of).
TRAINER_PRECISION_PLUGIN_CHECKS: dict[str, tuple[str, str]] = {
    "DeepSpeedPrecision": (
        "lightning/pytorch/plugins/precision/deepspeed.py:58",
        "`Trainer(strategy='deepspeed', precision={!r})` is not supported.",
    ),
    "FSDPPrecision": ("lightning/pytorch/plugins/precision/fsdp.py:56", "`precision={!r})` is not supported in FSDP."),
    "XLAPrecision": ("lightning/pytorch/plugins/precision/xla.py:47", "`precision={!r})` is not supported in XLA."),
}
#: ``file:line`` of each raise in the Trainer's connector (``lightning/pytorch/trainer/connectors/``).
_AC = "lightning/pytorch/trainer/connectors/accelerator_connector.py:"
TRAINER_CONNECTOR_LINES = {
    "strategy_name": _AC + "192",
    "accelerator_name": _AC + "204",
    "mps_parallel": _AC + "217",
    "layer_sync_conflict": _AC + "240",
    "plugin_type": _AC + "247",
    "plugin_duplicate": _AC + "254",
    "precision_twice": _AC + "260",
    "accelerator_twice": _AC + "273",
    "precision_plugin_twice": _AC + "280",
    "checkpoint_io_twice": _AC + "284",
    "cluster_environment_twice": _AC + "290",
    "cpu_parallel_devices": _AC + "298",
    "gpu_parallel_devices": _AC + "305",
    "num_nodes": _AC + "314",
    "devices_zero": _AC + "325",
    "no_gpu": _AC + "341",
    "unavailable": _AC + "356",
    "hpu": _AC + "402",
    "fsdp_gpu": _AC + "434",
    "fork": _AC + "440",
    "bitsandbytes": _AC + "499",
    "model_parallel_precision": _AC + "505",
    "no_precision": _AC + "492",
    "interactive": _AC + "535",
    "xla_strategy": _AC + "548",
    "start_method": "lightning/pytorch/strategies/launchers/multiprocessing.py:79",
    "cuda_devices": "lightning/pytorch/accelerators/cuda.py:94",
}
#: What in a project may add names to the Trainer's strategy and accelerator registries (the
#: registries themselves, a class's registering hook, the packages that register their own names
#: when imported: Habana's ``hpu``, Graphcore's ``ipu``), by the argument the names are for.
REGISTERING_WORDS = {
    "strategy": ("StrategyRegistry", "register_strategies", "lightning_habana"),
    "accelerator": ("AcceleratorRegistry", "register_accelerators", "lightning_habana", "lightning_graphcore"),
}
#: The checks ``Trainer(...)`` makes in its accelerator connector (PL006), as ``CONFIG_CHECKS`` for a
#: Fabric: how the message starts, the arguments the check reads, and where it is. A message not
#: here is not reported, and a ``machine`` check (devices present, the platform) is not judged.
TRAINER_CONFIG_CHECKS: tuple[ConfigCheck, ...] = (
    ConfigCheck(r"You selected an invalid strategy name", ("strategy",), TRAINER_CONNECTOR_LINES["strategy_name"]),
    ConfigCheck(
        r"You selected an invalid accelerator name", ("accelerator",), TRAINER_CONNECTOR_LINES["accelerator_name"]
    ),
    ConfigCheck(
        r"You set `strategy=.*MPS accelerator", ("strategy", "accelerator"), TRAINER_CONNECTOR_LINES["mps_parallel"]
    ),
    ConfigCheck(r"Found invalid type for plugin", ("plugins",), TRAINER_CONNECTOR_LINES["plugin_type"]),
    ConfigCheck(
        r"You set `Trainer\(sync_batchnorm=True\)`",
        ("sync_batchnorm", "plugins"),
        TRAINER_CONNECTOR_LINES["layer_sync_conflict"],
    ),
    ConfigCheck(r"Received multiple values for", ("plugins",), TRAINER_CONNECTOR_LINES["plugin_duplicate"]),
    ConfigCheck(r"Received both `precision=", ("precision", "plugins"), TRAINER_CONNECTOR_LINES["precision_twice"]),
    ConfigCheck(
        r"\w+ set through both strategy class",
        ("strategy", "accelerator", "plugins"),
        TRAINER_CONNECTOR_LINES["accelerator_twice"],
    ),
    ConfigCheck(
        r"(CPU|GPU) parallel_devices set through",
        ("accelerator", "strategy"),
        TRAINER_CONNECTOR_LINES["cpu_parallel_devices"],
    ),
    ConfigCheck(r"`num_nodes` must be a positive integer", ("num_nodes",), TRAINER_CONNECTOR_LINES["num_nodes"]),
    ConfigCheck(r"`Trainer\(devices=", ("devices",), TRAINER_CONNECTOR_LINES["devices_zero"]),
    ConfigCheck(
        r"`devices` selected with `CPUAccelerator`",
        ("devices", "accelerator"),
        "lightning/fabric/accelerators/cpu.py:99",
    ),
    ConfigCheck(
        r"Device ID's \(GPU\) must be unique",
        ("devices", "accelerator"),
        "lightning/fabric/utilities/device_parser.py:183",
    ),
    ConfigCheck(
        r"Device IDs \(GPU/TPU\) must be", ("devices", "accelerator"), "lightning/fabric/utilities/device_parser.py:197"
    ),
    ConfigCheck(
        r"The strategy `fsdp` requires a GPU accelerator",
        ("strategy", "accelerator"),
        TRAINER_CONNECTOR_LINES["fsdp_gpu"],
    ),
    ConfigCheck(
        r"The `ModelParallelStrategy` does not support",
        ("precision", "strategy"),
        TRAINER_CONNECTOR_LINES["model_parallel_precision"],
    ),
    ConfigCheck(
        r"`Trainer\(strategy=.*is not compatible with an interactive",
        ("strategy",),
        TRAINER_CONNECTOR_LINES["interactive"],
    ),
    ConfigCheck(
        r"The `XLAAccelerator` can only be used with",
        ("strategy", "accelerator"),
        TRAINER_CONNECTOR_LINES["xla_strategy"],
    ),
    ConfigCheck(r"No supported gpu backend found", ("accelerator",), TRAINER_CONNECTOR_LINES["no_gpu"], machine=True),
    ConfigCheck(
        r"`\w+` can not run on your system", ("accelerator",), TRAINER_CONNECTOR_LINES["unavailable"], machine=True
    ),
    ConfigCheck(r"You selected `Trainer\(strategy=", ("strategy",), TRAINER_CONNECTOR_LINES["fork"], machine=True),
    ConfigCheck(r"The start method", ("strategy",), TRAINER_CONNECTOR_LINES["start_method"], machine=True),
    ConfigCheck(
        r"You requested gpu:",
        ("devices", "accelerator"),
        "lightning/fabric/utilities/device_parser.py:136",
        machine=True,
    ),
    ConfigCheck(
        r"GPUs requested but none are available",
        ("devices", "accelerator"),
        "lightning/fabric/utilities/device_parser.py:89",
        machine=True,
    ),
)

# --------------------------------------------------------------------------------------------------
# The Trainer's optimisation contract (PL003's Trainer half)
# --------------------------------------------------------------------------------------------------

#: The Trainer's ``DeepSpeedStrategy`` (``lightning/pytorch/strategies/deepspeed.py``), every import path.
TRAINER_DEEPSPEED_CLASSES = tuple(
    f"{package}.{tail}"
    for package in ("lightning.pytorch", "pytorch_lightning")
    for tail in ("strategies.DeepSpeedStrategy", "strategies.deepspeed.DeepSpeedStrategy")
)
#: The Trainer's registry names that build a ``DeepSpeedStrategy`` (compared lower-cased).
TRAINER_DEEPSPEED_NAMES = frozenset(n for n, (c, _) in TRAINER_STRATEGY_REGISTRY.items() if c == "DeepSpeedStrategy")
#: ``__verify_manual_optimization_support`` (``gradient_clip_val > 0``, ``accumulate_grad_batches
#: != 1`` under manual optimisation) is in ``trainer/configuration_validator.py`` since 1.4.0.
MANUAL_OPTIMIZATION_CHECKS_SINCE = (1, 4)
