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

    @property
    def joint_setup_ok(self) -> bool:
        """Whether ``fabric.setup(model, optimizer)`` keeps behaviour under this strategy."""
        return self not in (Kind.XLA_FSDP, Kind.MODEL_PARALLEL, Kind.BASE)


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

#: Strategy registry strings (compared lower-cased, as the connector does).
STRATEGY_STRINGS: dict[str, Kind] = {
    "deepspeed": Kind.DEEPSPEED,
    "deepspeed_stage_1": Kind.DEEPSPEED,
    "deepspeed_stage_1_offload": Kind.DEEPSPEED,
    "deepspeed_stage_2": Kind.DEEPSPEED,
    "deepspeed_stage_2_offload": Kind.DEEPSPEED,
    "deepspeed_stage_3": Kind.DEEPSPEED,
    "deepspeed_stage_3_offload": Kind.DEEPSPEED,
    "deepspeed_stage_3_offload_nvme": Kind.DEEPSPEED,
    "xla": Kind.XLA,
    "tpu_spawn": Kind.XLA,  # 1.9 only
    "xla_fsdp": Kind.XLA_FSDP,
    "fsdp": Kind.FSDP,
    "fsdp_cpu_offload": Kind.FSDP,
    "ddp": Kind.DDP,
    "ddp_spawn": Kind.DDP,
    "ddp_fork": Kind.DDP,
    "ddp_notebook": Kind.DDP,
    "ddp_find_unused_parameters_true": Kind.DDP,
    "ddp_find_unused_parameters_false": Kind.DDP,
    "dp": Kind.DP,
    "single_xla": Kind.SINGLE_XLA,
    "single_tpu": Kind.SINGLE_XLA,
    "single_device": Kind.SINGLE_DEVICE,
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


def is_xla_accelerator_class(qualname: str) -> bool:
    return canonical(qualname) == XLA_ACCELERATOR_CLASS


def strategy_kind_of_class_name(name: str) -> Kind | None:
    """The kind of Fabric's strategy class called ``name`` (when only the spelling is known)."""
    entry = _STRATEGY_MODULES.get(name)
    return entry[1] if entry else None


def strategy_kind_of_string(value: str) -> Kind | None:
    return STRATEGY_STRINGS.get(value.strip().lower())
