"""The Lightning Trainer's accelerator connector, as pure functions over ``facts.py``.

``resolve(args, host, env)`` answers what ``Trainer(**args)`` configures in Lightning 2.6.6
(``lightning/pytorch/trainer/connectors/accelerator_connector.py``, ``_AcceleratorConnector``): the
strategy, accelerator, devices, precision plugin, launcher, cluster environment and layer sync — or
the exception the connector raises, with its message and the Lightning ``file:line`` that raises it.

The Trainer's connector is a sibling of Fabric's (``connector.py``): the same hosts, the same device
parsers, cluster environment detection and precision spellings, so this module reuses Fabric's
mirror for those and states only where the Trainer differs — its own strategy registry and classes
(no ``dp``/``xla_fsdp``; ``XLAStrategy`` is a ``DDPStrategy``), the accelerator chosen before the
devices are checked, ``MisconfigurationException`` for most errors, ``LayerSync`` plugins and
``sync_batchnorm``, and a launcher check that reads the launcher object, not the start method.

Arguments are plain values and ``Obj`` as in ``connector.py``; a strategy's ``Obj`` arguments read
here are the Trainer's constructor names: ``accelerator``, ``precision_plugin``, ``checkpoint_io``,
``cluster_environment``, ``parallel_devices`` (device strings), ``start_method`` and ``device``. An ``Obj`` names a class of
``lightning.pytorch`` (its ``module`` left out, or a ``lightning.pytorch``/``pytorch_lightning``
one); one whose ``module`` is Fabric's names Fabric's class of that name, which the Trainer rejects —
except cluster environments and checkpoint IO, which the two packages share. ``pytorch_lightning``
is folded onto ``lightning.pytorch`` (mixing the two is not detected). ``base`` names the
Trainer class a user's subclass derives from.

``scripts/gen_trainer_connector_table.py`` records the real connector's outcomes and
``tests/engine/test_trainer_connector.py`` holds this module to them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fabric_lsp import facts
from fabric_lsp.engine.lightning import connector as fabric
from fabric_lsp.engine.lightning.connector import (
    CPU,
    DEFAULT_HOSTS,
    ConnectorError,
    Host,
    Launcher,
    Obj,
    Outcome,
    _Connector,
    _Raised,
    _Strategy,
)

__all__ = ["CPU", "DEFAULT_HOSTS", "Host", "Launcher", "TrainerArgs", "TrainerOutcome", "resolve", "resolve_per_host"]

_MISCONFIGURATION = "MisconfigurationException"
_LINE = facts.TRAINER_CONNECTOR_LINES
_XLA_ACCELERATOR_MISSING = "lightning/fabric/accelerators/xla.py:35"
#: constructors of shared classes that need torch_xla (``lightning/fabric/...``)
_XLA_PLUGINS = {
    "XLAPrecision": "lightning/pytorch/plugins/precision/xla.py:43",
    "XLACheckpointIO": "lightning/fabric/plugins/io/xla.py:40",
    "XLAEnvironment": "lightning/fabric/plugins/environments/xla.py:36",
}


@dataclass(frozen=True)
class TrainerArgs:
    """The connector's arguments of ``Trainer(...)``, as the code passes them (defaults: the Trainer's)."""

    accelerator: Any = "auto"
    strategy: Any = "auto"
    devices: Any = "auto"
    num_nodes: Any = 1
    precision: Any = None
    plugins: Any = None
    sync_batchnorm: Any = False


@dataclass(frozen=True)
class TrainerOutcome(Outcome):
    """``Outcome`` plus what only the Trainer has: the device a ``MixedPrecision`` autocasts on and
    the strategy's layer sync (``TorchSyncBatchNorm`` for ``sync_batchnorm=True``; single-device
    strategies have none, so the flag is silently dropped there)."""

    amp_device: str | None = None
    layer_sync: str | None = None

    @property
    def wraps_module(self) -> bool | None:
        return None  # a Fabric notion (``setup_module``): the Trainer wraps the model itself

    @property
    def world_size(self) -> int:
        return self.num_processes * (self.num_nodes if _has_num_nodes(self.strategy_base) else 1)


def resolve(args: TrainerArgs, host: Host = CPU, env: Mapping[str, str] | None = None) -> TrainerOutcome:
    """What Lightning 2.6.6 makes of ``Trainer(**args)`` on ``host`` with environment variables ``env``
    (cluster variables; the Trainer does not read ``fabric run``'s ``LT_*``)."""
    run = _TrainerConnector(host, dict(env or {}))
    try:
        values = [_typed(getattr(args, name)) for name in ("accelerator", "strategy", "plugins")]
        for value in values:
            run.construct(value)
        run.connect(dataclasses.replace(args, accelerator=values[0], strategy=values[1], plugins=values[2]))
    except _Raised as exc:
        return TrainerOutcome(host, ConnectorError(exc.type, exc.message, exc.where), tuple(run.warnings))
    return run.trainer_outcome()


def resolve_per_host(
    args: TrainerArgs, env: Mapping[str, str] | None = None, hosts: Iterable[Host] = DEFAULT_HOSTS
) -> dict[str, TrainerOutcome]:
    """``resolve`` under each hardware assumption, keyed by its description ("on CUDA with 8 devices")."""
    return {host.describe(): resolve(args, host, env) for host in hosts}


# ----------------------------------------------------------------------------- the Trainer's classes
def _package(module: str) -> str:
    for prefix, package in (("lightning_fabric", "lightning.fabric"), ("pytorch_lightning", "lightning.pytorch")):
        if module == prefix or module.startswith(prefix + "."):
            return package
    return ".".join(module.split(".")[:2])


def _module_of(cls: str) -> str:
    for table in (facts.TRAINER_STRATEGY_CLASS_FACTS, facts.TRAINER_PLUGIN_CLASSES):
        if cls in table:
            return str(table[cls].module)
    return facts.TRAINER_ACCELERATOR_MODULES.get(cls, "__main__")


def _typed(value: Any) -> Any:
    """``value`` with each ``Obj`` given its module (so that it prints as the Trainer's class does)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_typed(v) for v in value)
    if not isinstance(value, Obj):
        return value
    args = tuple((k, _typed(v)) for k, v in value.args)
    return dataclasses.replace(value, args=args, module=value.module or _module_of(value.cls))


def _own(value: Any, table: Mapping[str, Any]) -> str | None:
    """The Trainer class (of ``table``) ``value`` is an instance of, if any: its own class when that is
    the Trainer's (Fabric's class of the same name is another class, but for the shared cluster
    environments and checkpoint IO), or the Trainer class a subclass declares as its ``base``."""
    if not isinstance(value, Obj):
        return None
    if value.cls in table:
        known = _module_of(value.cls)
        if _package(value.module or known) == _package(known):
            return value.cls
    return value.base if value.base in table else None


def _accelerator_class(value: Any) -> str | None:
    cls = _own(value, facts.TRAINER_ACCELERATOR_MODULES)
    return facts.ACCELERATOR_BASES.get(cls, cls) if cls else None


def _strategy_class(value: Any) -> str | None:
    return _own(value, facts.TRAINER_STRATEGY_CLASS_FACTS)


def _plugin_class(value: Any) -> str | None:
    return _own(value, facts.TRAINER_PLUGIN_CLASSES)


def _chain(cls: str | None) -> list[str]:
    out: list[str] = []
    while cls is not None and cls in facts.TRAINER_STRATEGY_CLASS_FACTS:
        out.append(cls)
        cls = facts.TRAINER_STRATEGY_CLASS_FACTS[cls].parent
    return out


def _is_a(cls: str | None, ancestor: str) -> bool:
    return ancestor in _chain(cls)


def _has_num_nodes(cls: str | None) -> bool:
    return any(_is_a(cls, c) for c in facts.TRAINER_STRATEGIES_WITH_NUM_NODES)


def _plugin_is_a(value: Any, ancestor: str) -> bool:
    return fabric.class_is_a(_plugin_class(value), ancestor, facts.TRAINER_PLUGIN_CLASSES)


def _plugin_precision(plugin: Obj) -> str | None:
    return fabric.plugin_precision(plugin, _plugin_class(plugin), facts.TRAINER_PLUGIN_CLASSES)


def _is_xla_strategy(cls: str | None) -> bool:
    return _is_a(cls, "SingleDeviceXLAStrategy") or _is_a(cls, "XLAStrategy")


# ---------------------------------------------------------------------------------- the checks
class _TrainerConnector(_Connector):
    """``_AcceleratorConnector.__init__`` step by step; what it shares with Fabric's is inherited."""

    def __init__(self, host: Host, env: dict[str, str]) -> None:
        super().__init__(host, env)
        self.layer_sync: Obj | None = None
        self.amp_device: str | None = None

    def construct(self, value: Any) -> None:
        """The user's code building the objects it passes: the XLA classes need torch_xla."""
        if isinstance(value, (list, tuple)):
            for item in value:
                self.construct(item)
            return
        if not isinstance(value, Obj):
            return
        for _, arg in value.args:
            self.construct(arg)
        where = self._xla_constructor(value)
        if where and not self.host.tpu:
            raise _Raised("ModuleNotFoundError", facts.TORCH_XLA_MISSING, where)

    @staticmethod
    def _xla_constructor(value: Obj) -> str | None:
        strategy = _strategy_class(value)
        if strategy is not None:
            needs = (facts.TRAINER_STRATEGY_CLASS_FACTS[c].needs_xla for c in _chain(strategy))
            return next((where for where in needs if where), None)
        if _accelerator_class(value) == "XLAAccelerator":
            return _XLA_ACCELERATOR_MISSING
        return next((w for c, w in _XLA_PLUGINS.items() if _plugin_is_a(value, c)), None)

    def connect(self, a: Any) -> None:
        self._trainer_config(a)
        if self.accelerator_flag == "auto":
            self.accelerator_flag = self._choose_auto_accelerator()
        elif self.accelerator_flag == "gpu":
            self.accelerator_flag = self._choose_gpu()
        self._trainer_devices(a.devices, a.num_nodes)
        self._trainer_accelerator()
        self._choose_cluster_environment()
        if self.strategy_flag == "auto":
            self.strategy_flag = self._choose_strategy()
        self._trainer_fallback()
        self.strategy = self._trainer_strategy()
        self.precision = self._trainer_precision()
        self._trainer_lazy_init(self.strategy)

    def trainer_outcome(self) -> TrainerOutcome:
        out = self.outcome()
        s = self.strategy
        assert s is not None
        parallel = _is_a(s.base, "ParallelStrategy")
        layer_sync = self.layer_sync.cls if parallel and self.layer_sync is not None else None
        return TrainerOutcome(
            **{f.name: getattr(out, f.name) for f in dataclasses.fields(Outcome)},
            amp_device=self.amp_device,
            layer_sync=layer_sync,
        )

    # -- flags (``_check_config_and_set_final_flags``) ----------------------------------------------
    def _trainer_config(self, a: Any) -> None:
        plugins = a.plugins
        if plugins is not None and not isinstance(plugins, Iterable):
            plugins = [plugins]
        strategy = a.strategy.lower() if isinstance(a.strategy, str) else a.strategy
        self.strategy_flag = strategy
        self._trainer_names(strategy, a.accelerator)
        self._trainer_mps(strategy, a.accelerator)
        self.accelerator_flag = a.accelerator
        precision = self._convert(a.precision)
        if a.sync_batchnorm:
            self.layer_sync = Obj("TorchSyncBatchNorm", module=_module_of("TorchSyncBatchNorm"))
        if plugins:
            self._trainer_plugins(plugins, precision, a.sync_batchnorm)
        self.precision_input = "32-true" if precision is None else precision
        if _strategy_class(self.strategy_flag):
            self._trainer_strategy_instance(self.strategy_flag)

    def _convert(self, precision: Any) -> str | None:
        try:
            return self._convert_precision(precision)
        except _Raised as exc:
            raise _Raised(exc.type, exc.message, "lightning/fabric/connector.py:565") from None

    def _trainer_names(self, strategy: Any, accelerator: Any) -> None:
        if (
            strategy != "auto"
            and strategy not in list(facts.TRAINER_STRATEGY_REGISTRY)
            and not _strategy_class(strategy)
        ):
            raise _Raised(
                "ValueError",
                f"You selected an invalid strategy name: `strategy={strategy!r}`."
                " It must be either a string or an instance of `lightning.pytorch.strategies.Strategy`."
                " Example choices: auto, ddp, ddp_spawn, deepspeed, ..."
                " Find a complete list of options in our documentation at https://lightning.ai",
                _LINE["strategy_name"],
            )
        names = sorted(facts.ACCELERATOR_REGISTRY)
        if accelerator not in names and accelerator not in ("auto", "gpu") and not _accelerator_class(accelerator):
            raise _Raised(
                "ValueError",
                f"You selected an invalid accelerator name: `accelerator={accelerator!r}`."
                f" Available names are: auto, {', '.join(names)}.",
                _LINE["accelerator_name"],
            )

    def _trainer_mps(self, strategy: Any, accelerator: Any) -> None:
        named = isinstance(strategy, str) and ("ddp" in strategy or "deepspeed" in strategy)
        parallel = named or _is_a(_strategy_class(strategy), "ParallelStrategy")
        mps = self.host.mps and (
            accelerator in ("mps", "auto", "gpu", None) or _accelerator_class(accelerator) == "MPSAccelerator"
        )
        if mps and parallel:
            raise _Raised(
                "ValueError",
                f"You set `strategy={strategy}` but strategies from the DDP family are not supported on the"
                " MPS accelerator. Either explicitly set `accelerator='cpu'` or change the strategy.",
                _LINE["mps_parallel"],
            )

    def _trainer_plugins(self, plugins: Iterable[Any], precision: str | None, sync_batchnorm: Any) -> None:
        kinds: Counter[str] = Counter()
        for plugin in plugins:
            cls = _plugin_class(plugin)
            category = facts.TRAINER_PLUGIN_CLASSES[cls].category if cls else None
            if category is None:
                raise _Raised(
                    _MISCONFIGURATION,
                    f"Found invalid type for plugin {plugin}. Expected one of: Precision, "
                    "CheckpointIO, ClusterEnvironment, or LayerSync.",
                    _LINE["plugin_type"],
                )
            if category == "LayerSync":
                if sync_batchnorm and not _plugin_is_a(plugin, "TorchSyncBatchNorm"):
                    raise _Raised(
                        _MISCONFIGURATION,
                        f"You set `Trainer(sync_batchnorm=True)` and provided a `{plugin.cls}`"
                        " plugin, but this is not allowed. Choose one or the other.",
                        _LINE["layer_sync_conflict"],
                    )
                self.layer_sync = plugin
                kinds["TorchSyncBatchNorm"] += 1
                continue
            kinds[category] += 1
            if category == "Precision":
                self.precision_instance = plugin
            elif category == "CheckpointIO":
                self.checkpoint_io = plugin
            else:
                self.cluster_environment_flag = plugin
        duplicated = [k for k, v in kinds.items() if v > 1]
        if duplicated:
            raise _Raised(
                _MISCONFIGURATION,
                f"Received multiple values for {', '.join(duplicated)} flags in `plugins`."
                " Expected one value for each type at most.",
                _LINE["plugin_duplicate"],
            )
        if kinds.get("Precision") and precision is not None:
            raise _Raised(
                "ValueError",
                f"Received both `precision={precision}` and `plugins={self.precision_instance}`. Choose one.",
                _LINE["precision_twice"],
            )

    def _trainer_strategy_instance(self, strategy: Obj) -> None:
        for name, attribute, message, line in (
            ("accelerator", "accelerator_flag", "accelerator flag", "accelerator_twice"),
            ("precision_plugin", "precision_instance", "plugins", "precision_plugin_twice"),
            ("checkpoint_io", "checkpoint_io", "plugins", "checkpoint_io_twice"),
        ):
            value = strategy.arg(name)
            if not value:
                continue
            current = getattr(self, attribute)
            if current != "auto" if name == "accelerator" else current:
                setting = "precision" if name == "precision_plugin" else name
                raise _Raised(
                    _MISCONFIGURATION,
                    f"{setting} set through both strategy class and {message}, choose one",
                    _LINE[line],
                )
            setattr(self, attribute, value)
        own = self._own_cluster_environment(strategy)
        if own is not None:
            if self.cluster_environment_flag is not None:
                raise _Raised(
                    _MISCONFIGURATION,
                    "cluster_environment set through both strategy class and plugins, choose one",
                    _LINE["cluster_environment_twice"],
                )
            self.cluster_environment_flag = own
        devices = strategy.arg("parallel_devices") if _is_a(_strategy_class(strategy), "ParallelStrategy") else None
        if devices:
            self._trainer_parallel_devices(strategy, list(devices))

    @staticmethod
    def _own_cluster_environment(strategy: Obj) -> Obj | None:
        cls = _strategy_class(strategy)
        if not _is_a(cls, "ParallelStrategy"):
            return None
        for c in _chain(cls):
            own = facts.TRAINER_STRATEGY_CLASS_FACTS[c].own_cluster_environment
            if own:
                return Obj(own, module=_module_of(own))
        env = strategy.arg("cluster_environment")
        return env if isinstance(env, Obj) else None

    def _trainer_parallel_devices(self, strategy: Obj, devices: list[str]) -> None:
        device_type = devices[0].split(":")[0]
        for kind, allowed, label in (("cpu", ("auto", "cpu"), "CPU"), ("cuda", ("auto", "cuda", "gpu"), "GPU")):
            if device_type != kind:
                continue
            if self.accelerator_flag and self.accelerator_flag not in allowed:
                raise _Raised(
                    _MISCONFIGURATION,
                    f"{label} parallel_devices set through {strategy.cls} class,"
                    f" but accelerator set to {self.accelerator_flag}, please choose one device type",
                    _LINE[f"{kind if kind == 'cpu' else 'gpu'}_parallel_devices"],
                )
            self.accelerator_flag = kind
        self.parallel_devices = devices

    # -- accelerator and devices -------------------------------------------------------------------
    def _choose_gpu(self) -> str:
        if self.host.mps:
            return "mps"
        if self.host.cuda:
            return "cuda"
        raise _Raised(_MISCONFIGURATION, "No supported gpu backend found!", _LINE["no_gpu"])

    def _trainer_devices(self, devices: Any, num_nodes: Any) -> None:
        if not isinstance(num_nodes, int) or num_nodes < 1:
            raise _Raised(
                "ValueError", f"`num_nodes` must be a positive integer, but got {num_nodes}.", _LINE["num_nodes"]
            )
        self.num_nodes_flag = num_nodes
        self.devices_flag = devices
        if devices in ([], 0, "0"):
            flag = self.accelerator_flag
            name = flag.cls if isinstance(flag, Obj) else flag
            raise _Raised(
                _MISCONFIGURATION,
                f"`Trainer(devices={devices!r})` value is not a valid input using {name} accelerator.",
                _LINE["devices_zero"],
            )

    def _trainer_accelerator(self) -> None:
        flag = self.accelerator_flag
        if isinstance(flag, Obj):
            self.accelerator = flag.cls
            kind = _accelerator_class(flag) or flag.cls
        else:
            self.accelerator = kind = facts.ACCELERATOR_REGISTRY[flag]
            if kind == "XLAAccelerator" and not self.host.tpu:  # the registry builds it
                raise _Raised("ModuleNotFoundError", facts.TORCH_XLA_MISSING, _XLA_ACCELERATOR_MISSING)
        if not self._available(kind):
            names = [n for n in sorted(facts.ACCELERATOR_REGISTRY) if self._available(facts.ACCELERATOR_REGISTRY[n])]
            raise _Raised(
                _MISCONFIGURATION,
                f"`{self.accelerator}` can not run on your system"
                " since the accelerator is not available. The following accelerator(s)"
                " is available and can be passed into `accelerator` argument of"
                f" `Trainer`: {names}.",
                _LINE["unavailable"],
            )
        if self.devices_flag == "auto":
            self.devices_flag = self._auto_device_count(kind)
        self.devices_flag = fabric._DEVICE_PARSERS[kind](self, self.devices_flag)
        if not self.parallel_devices:
            self.parallel_devices = fabric._PARALLEL_DEVICES[kind](self, self.devices_flag)
        self.accelerator_kind = kind

    def _cuda_devices(self, devices: Any) -> list[str]:
        if devices is None:
            raise _Raised("TypeError", "'NoneType' object is not iterable", _LINE["cuda_devices"])
        return [f"cuda:{i}" for i in devices]

    # -- strategy ----------------------------------------------------------------------------------
    def _trainer_fallback(self) -> None:
        flag = "" if _strategy_class(self.strategy_flag) else self.strategy_flag
        exact_fsdp = (
            isinstance(self.strategy_flag, Obj) and _strategy_class(self.strategy_flag) == self.strategy_flag.cls
        )
        exact_fsdp = exact_fsdp and self.strategy_flag.cls == "FSDPStrategy"
        cuda = (
            self.accelerator_flag in ("cuda", "gpu") or _accelerator_class(self.accelerator_flag) == "CUDAAccelerator"
        )
        if (flag in facts.TRAINER_FSDP_ALIASES or exact_fsdp) and not cuda:
            raise _Raised(
                "ValueError",
                f"The strategy `fsdp` requires a GPU accelerator, but received "
                f"`accelerator={self.accelerator_flag!r}`. Please set `accelerator='cuda'`, `accelerator='gpu'`,"
                " or pass a `CUDAAccelerator()` instance to use FSDP.",
                _LINE["fsdp_gpu"],
            )
        if flag in facts.TRAINER_DDP_FORK_ALIASES and "fork" not in self.host.start_methods:
            raise _Raised(
                "ValueError",
                f"You selected `Trainer(strategy='{flag}')` but process forking is not supported on this"
                " platform. We recommend `Trainer(strategy='ddp_spawn')` instead.",
                _LINE["fork"],
            )
        if flag:
            self.strategy_flag = flag

    def _trainer_strategy(self) -> _Strategy:
        flag = self.strategy_flag
        if isinstance(flag, str):
            cls, start_method = facts.TRAINER_STRATEGY_REGISTRY[flag]
            known = facts.TRAINER_STRATEGY_CLASS_FACTS[cls]
            if known.required_argument is not None:
                owner, argument, where = known.required_argument
                raise _Raised(
                    "TypeError", f"{owner}.__init__() missing 1 required positional argument: '{argument}'", where
                )
            if known.needs_xla and not self.host.tpu:
                raise _Raised("ModuleNotFoundError", facts.TORCH_XLA_MISSING, known.needs_xla)
            own = known.own_cluster_environment
            environment = Obj(own, module=_module_of(own)) if own else None
            return _Strategy(cls, cls, start_method, cluster_environment=environment, device=known.default_device)
        base = _strategy_class(flag)
        assert base is not None
        strategy = _Strategy(
            flag.cls, base, flag.arg("start_method", "popen"), device=fabric._single_device(base, flag.arg("device"))
        )
        if _is_a(base, "ParallelStrategy"):
            strategy.parallel_devices = list(flag.arg("parallel_devices") or [])
            strategy.cluster_environment = self._own_cluster_environment(flag)
        return strategy

    # -- precision ---------------------------------------------------------------------------------
    def _trainer_precision(self) -> tuple[str, str | None]:
        assert self.strategy is not None
        plugin = self.precision_instance
        if _plugin_is_a(plugin, "BitsandbytesPrecision") and self.accelerator_kind != "CUDAAccelerator":
            raise _Raised("RuntimeError", "Bitsandbytes is only supported on CUDA GPUs.", _LINE["bitsandbytes"])
        supported = facts.MODEL_PARALLEL_PRECISIONS
        if (
            _is_a(_strategy_class(self.strategy_flag), "ModelParallelStrategy")
            and self.precision_input not in supported
        ):
            raise _Raised(
                "ValueError",  # the message names Fabric, as Lightning's does
                f"The `ModelParallelStrategy` does not support `Fabric(..., precision={self.precision_input!r})`."
                f" Choose a different precision among: {', '.join(supported)}.",
                _LINE["model_parallel_precision"],
            )
        if plugin is not None:
            self.amp_device = plugin.arg("device") if _plugin_is_a(plugin, "MixedPrecision") else None
            return plugin.cls, _plugin_precision(plugin)
        base = self.strategy.base
        own = "XLAPrecision" if _is_xla_strategy(base) else None
        own = own or ("DeepSpeedPrecision" if _is_a(base, "DeepSpeedStrategy") else None)
        own = own or ("FSDPPrecision" if _is_a(base, "FSDPStrategy") else None)
        if own is not None:
            where, message = facts.TRAINER_PRECISION_PLUGIN_CHECKS[own]
            accepted = facts.PRECISION_PLUGIN_ACCEPTS[own][1]
            if self.precision_input not in accepted:
                raise _Raised(
                    "ValueError",
                    f"{message.format(self.precision_input)} `precision` must be one of: {accepted}.",
                    where,
                )
            return own, str(self.precision_input)
        return self._trainer_generic_precision()

    def _trainer_generic_precision(self) -> tuple[str, str | None]:
        flag = self.precision_input
        if flag in ("16-true", "bf16-true"):
            return "HalfPrecision", flag
        if flag in ("32-true", "64-true", "transformer-engine", "transformer-engine-float16"):
            cls = facts.GENERIC_PRECISION_PLUGINS[flag]
            return cls, facts.TRAINER_PLUGIN_CLASSES[cls].precision
        if flag == "16-mixed" and self.accelerator_flag == "cpu":
            self.warnings.append(
                "You passed `Trainer(accelerator='cpu', precision='16-mixed')` but AMP with fp16 is not supported on "
                "CPU. Using `precision='bf16-mixed'` instead."
            )
            flag = self.precision_input = "bf16-mixed"
        if flag in ("16-mixed", "bf16-mixed"):
            self.amp_device = self.accelerator_flag if self.accelerator_flag in ("cpu", "mps") else "cuda"
            return "MixedPrecision", flag
        raise _Raised("RuntimeError", "No precision set", _LINE["no_precision"])

    # -- strategy, part 2 (``_lazy_init_strategy``) ------------------------------------------------
    def _trainer_lazy_init(self, s: _Strategy) -> None:
        assert self.precision is not None
        plugin = self.precision_instance or Obj(self.precision[0], module=_module_of(self.precision[0]))
        for cls in _chain(s.base):
            required = facts.TRAINER_STRATEGY_CLASS_FACTS[cls].precision_plugin
            if required is not None:
                if not _plugin_is_a(plugin, required[0]):
                    name = "FSDP" if required[0] == "FSDPPrecision" else "XLA"
                    raise _Raised(
                        "TypeError",
                        f"The {name} strategy can only work with the `{required[0]}` plugin, found {plugin}",
                        required[1],
                    )
                break
        io = self.checkpoint_io
        xla_io = next((facts.TRAINER_STRATEGY_CLASS_FACTS[c].xla_checkpoint_io for c in _chain(s.base)), None)
        if io and xla_io and not (_plugin_is_a(io, "XLACheckpointIO") or _plugin_is_a(io, "AsyncCheckpointIO")):
            raise _Raised(
                "TypeError", f"The XLA strategy can only work with the `XLACheckpointIO` plugin, found {io}", xla_io
            )
        if _is_a(s.base, "ParallelStrategy"):
            env = s.cluster_environment
            if env is not None:
                self._set_cluster_environment(env.cls, fabric._plugin_class(env) or env.cls)
            if s.parallel_devices:
                self.parallel_devices = s.parallel_devices
        if not _has_num_nodes(s.base):
            self.num_nodes_flag = 1
        self.launcher = self._trainer_launcher(s)
        if self.host.interactive and self.launcher.value not in (Launcher.NONE.value, *facts.INTERACTIVE_LAUNCHERS):
            raise _Raised(
                _MISCONFIGURATION,
                f"`Trainer(strategy={self.strategy_flag!r})` is not compatible with an interactive"
                " environment. Run your code as a script, or choose a notebook-compatible strategy:"
                " `Trainer(strategy='ddp_notebook')`."
                " In case you are spawning processes yourself, make sure to include the Trainer"
                " creation inside the worker function.",
                _LINE["interactive"],
            )
        if self.accelerator_kind == "XLAAccelerator" and not _is_xla_strategy(s.base):
            raise _Raised(
                "ValueError",
                "The `XLAAccelerator` can only be used with a `SingleDeviceXLAStrategy` or `XLAStrategy`,"
                f" found {s.cls}.",
                _LINE["xla_strategy"],
            )

    def _trainer_launcher(self, s: _Strategy) -> Launcher:
        rule = next(
            (facts.TRAINER_STRATEGY_CLASS_FACTS[c].launcher for c in _chain(s.base) if c in _LAUNCHER_OWNERS), "none"
        )
        if rule == "ddp":
            if s.start_method == "popen":
                return Launcher.SUBPROCESS_SCRIPT  # even when the cluster creates the processes
            if s.start_method not in self.host.start_methods:
                raise _Raised(
                    "ValueError",
                    f"The start method '{s.start_method}' is not available on this platform. Available methods are:"
                    f" {', '.join(self.host.start_methods)}",
                    _LINE["start_method"],
                )
            return Launcher(s.start_method)
        if rule == "script":
            return Launcher.NONE if self.cluster_external else Launcher.SUBPROCESS_SCRIPT
        return Launcher.XLA if rule == "xla" else Launcher.NONE


#: Strategy classes that define ``_configure_launcher`` (subclasses inherit it).
_LAUNCHER_OWNERS = frozenset(c for c, f in facts.TRAINER_STRATEGY_CLASS_FACTS.items() if f.launcher != "none")
