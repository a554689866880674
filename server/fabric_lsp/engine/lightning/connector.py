"""Lightning Fabric's accelerator connector, as pure functions over ``facts.py``.

``resolve(args, host, env)`` answers what ``Fabric(**args)`` becomes in Lightning 2.6.6
(``lightning/fabric/connector.py``): the strategy, accelerator, devices, precision plugin, launcher
and cluster environment — or the exception the connector raises, with its exact message — plus the
warnings it emits. Static analysis does not know the target machine, so the hardware is a
parameter (``Host``); ``resolve_per_host`` gives the outcome under several assumptions.

Arguments are plain values: strings, ints and lists as written, and ``Obj`` for an instance
(``DDPStrategy(start_method="spawn")`` → ``Obj("DDPStrategy", args=(("start_method", "spawn"),))``).
An ``Obj`` prints like the object's default ``repr`` with its address elided (``0x…``), so messages
that embed an object read as Lightning's do.

Every Lightning fact used here lives in ``facts.py``; this module holds the order of the checks.
``scripts/gen_connector_table.py`` records the real connector's outcomes and
``tests/engine/test_lightning_adapter.py`` holds this module to them.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

from fabric_lsp import facts
from fabric_lsp.facts import Kind

#: How an elided object address reads in messages.
ADDRESS = "0x…"


# ---------------------------------------------------------------------------------------- inputs
@dataclass(frozen=True, repr=False)
class Obj:
    """An object passed to ``Fabric``: an accelerator, strategy or plugin instance, known by its class.

    ``args`` are the constructor arguments the connector reads: for strategies ``start_method``,
    ``accelerator``/``precision``/``checkpoint_io``/``cluster_environment`` (``Obj``s),
    ``parallel_devices`` (device strings such as ``"cpu"``, ``"cuda:1"``) and ``device``
    (``SingleDeviceStrategy``); for precision plugins ``precision``.
    ``base`` names the Fabric class a user's subclass derives from; ``module`` is where the class is
    defined (defaults to Fabric's own module for Fabric's classes). ``fabric=False`` marks an object
    of a class that is not Fabric's (a Trainer strategy, a ``lightning_fabric`` class given to
    ``lightning.fabric.Fabric``).
    """

    cls: str
    args: tuple[tuple[str, Any], ...] = ()
    base: str | None = None
    module: str | None = None
    fabric: bool = True
    #: constructor arguments written but not known statically (keyword names; ``"*"`` for
    #: positional arguments after the first and ``**`` unpacking): checks that read them must not guess
    unknown: tuple[str, ...] = ()

    def arg(self, name: str, default: Any = None) -> Any:
        return dict(self.args).get(name, default)

    def __repr__(self) -> str:
        return f"<{self.module or _default_module(self.cls)}.{self.cls} object at {ADDRESS}>"


def _default_module(cls: str) -> str:
    for table in (facts.STRATEGY_CLASS_FACTS, facts.PLUGIN_CLASSES):
        if cls in table:
            return str(table[cls].module)
    return facts.ACCELERATOR_MODULES.get(cls, "__main__")


@dataclass(frozen=True)
class FabricArgs:
    """The connector's arguments of ``Fabric(...)``, as the code passes them (defaults: Fabric's)."""

    accelerator: Any = "auto"
    strategy: Any = "auto"
    devices: Any = "auto"
    num_nodes: Any = 1
    precision: Any = None
    plugins: Any = None


@dataclass(frozen=True)
class Host:
    """A hardware assumption: visible CUDA devices, an Apple MPS GPU, TPU chips, a notebook/REPL,
    and the platform's ``multiprocessing`` start methods (Windows has only ``spawn``).

    ``torch_xla`` is taken to be installed exactly on TPU hosts; deepspeed, transformer_engine and
    bitsandbytes are taken to be installed (without them their strategy/plugin raises ImportError)."""

    cuda: int = 0
    mps: bool = False
    tpu: int = 0
    interactive: bool = False
    start_methods: tuple[str, ...] = facts.START_METHODS_POSIX

    def describe(self) -> str:
        if self.tpu:
            where = f"on TPU with {self.tpu} devices"
        elif self.mps:
            where = "on MPS"
        elif self.cuda:
            where = f"on CUDA with {self.cuda} device{'s' if self.cuda > 1 else ''}"
        else:
            where = "on CPU"
        if self.interactive:
            where += " in a notebook"
        if self.start_methods != facts.START_METHODS_POSIX:
            where += " without fork"
        return where


CPU = Host()
#: The assumptions ``resolve_per_host`` answers for by default.
DEFAULT_HOSTS = (CPU, Host(cuda=1), Host(cuda=8), Host(mps=True), Host(tpu=8))


# --------------------------------------------------------------------------------------- outcome
class Launcher(enum.Enum):
    SUBPROCESS_SCRIPT = "subprocess script"  # the script is re-run per process (``ddp``, FSDP, …)
    SPAWN = "spawn"
    FORK = "fork"
    FORKSERVER = "forkserver"
    XLA = "xla"
    NONE = "none"


@dataclass(frozen=True)
class ConnectorError:
    type: str  # the exception class name, e.g. "ValueError", "MisconfigurationException"
    message: str
    #: the Lightning ``file:line`` that raises (``lightning/fabric/utilities/device_parser.py:136``),
    #: where the mirror records it (the Trainer's mirror always; Fabric's for the shared parsers)
    where: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Outcome:
    """What ``Fabric(...)`` becomes on ``host``: ``error`` is set when construction raises."""

    host: Host
    error: ConnectorError | None = None
    warnings: tuple[str, ...] = ()
    strategy: str | None = None  # class name (a user subclass keeps its own name)
    strategy_base: str | None = None  # the Fabric class it is
    accelerator: str | None = None  # class name
    devices: tuple[str, ...] = ()  # parallel devices, or the single device
    num_nodes: int = 1
    precision: str | None = None  # the precision plugin's ``precision``
    precision_plugin: str | None = None  # class name
    launcher: Launcher | None = None
    cluster_environment: str | None = None

    @property
    def kind(self) -> Kind | None:
        return facts.strategy_kind_of_class_name(self.strategy_base) if self.strategy_base else None

    @property
    def wraps_module(self) -> bool | None:
        """Whether ``setup_module`` wraps the model (then calls of methods other than ``forward``
        bypass the strategy: FAB003)."""
        if self.strategy_base is None:
            return None
        return facts.STRATEGY_CLASS_FACTS[self.strategy_base].wraps_module

    @property
    def num_processes(self) -> int:
        """Processes per node: one per parallel device, except for single-device and DP."""
        if self.strategy_base is None or not _is_a(self.strategy_base, "ParallelStrategy"):
            return 1
        return 1 if _is_a(self.strategy_base, "DataParallelStrategy") else len(self.devices)

    @property
    def world_size(self) -> int:
        return self.num_processes * (self.num_nodes if _has_num_nodes(self.strategy_base) else 1)


def resolve(args: FabricArgs, host: Host = CPU, env: Mapping[str, str] | None = None) -> Outcome:
    """What Lightning 2.6.6 makes of ``Fabric(**args)`` on ``host`` with environment variables ``env``
    (``LT_*`` set by ``fabric run``, cluster variables; ``None``: none set)."""
    run = _Connector(host, dict(env or {}))
    try:
        for value in (args.accelerator, args.strategy, args.plugins):
            run.construct(value)
        run.connect(args)
    except _Raised as exc:
        return Outcome(host, ConnectorError(exc.type, exc.message, exc.where), tuple(run.warnings))
    return run.outcome()


def resolve_per_host(
    args: FabricArgs, env: Mapping[str, str] | None = None, hosts: Iterable[Host] = DEFAULT_HOSTS
) -> dict[str, Outcome]:
    """``resolve`` under each hardware assumption, keyed by its description ("on CUDA with 8 devices")."""
    return {host.describe(): resolve(args, host, env) for host in hosts}


def resolve_strategy(
    args: FabricArgs, host: Host = CPU, env: Mapping[str, str] | None = None
) -> tuple[Kind, str] | ConnectorError:
    """The strategy's kind and class name, or the error ``Fabric(...)`` raises."""
    out = resolve(args, host, env)
    if out.error is not None:
        return out.error
    assert out.kind is not None and out.strategy is not None
    return out.kind, out.strategy


# ------------------------------------------------------------------------------ class hierarchy
def _strategy_chain(cls: str) -> list[str]:
    chain: list[str] = []
    current: str | None = cls
    while current is not None and current in facts.STRATEGY_CLASS_FACTS:
        chain.append(current)
        current = facts.STRATEGY_CLASS_FACTS[current].parent
    return chain


def _is_a(cls: str, ancestor: str) -> bool:
    return ancestor in _strategy_chain(cls)


def _has_num_nodes(cls: str | None) -> bool:
    return cls is not None and any(_is_a(cls, c) for c in facts.STRATEGIES_WITH_NUM_NODES)


def _fabric_class(obj: Obj, table: Mapping[str, Any]) -> str | None:
    """The Fabric class ``obj`` is an instance of (its own or its declared base), if any."""
    if not obj.fabric:
        return None
    if obj.cls in table:
        return obj.cls
    return obj.base if obj.base in table else None


def _strategy_class(value: Any) -> str | None:
    return _fabric_class(value, facts.STRATEGY_CLASS_FACTS) if isinstance(value, Obj) else None


def _accelerator_class(value: Any) -> str | None:
    if not isinstance(value, Obj):
        return None
    cls = _fabric_class(value, facts.ACCELERATOR_MODULES)
    return facts.ACCELERATOR_BASES.get(cls, cls) if cls else None


def _plugin_class(value: Any) -> str | None:
    return _fabric_class(value, facts.PLUGIN_CLASSES) if isinstance(value, Obj) else None


def class_is_a(cls: str | None, ancestor: str, classes: Mapping[str, Any]) -> bool:
    """Whether the plugin class ``cls`` is ``ancestor`` or derives from it, by ``classes``
    (Fabric's ``facts.PLUGIN_CLASSES`` or the Trainer's)."""
    while cls is not None:
        if cls == ancestor:
            return True
        cls = classes[cls].parent
    return False


def plugin_precision(plugin: Obj, cls: str | None, classes: Mapping[str, Any]) -> str | None:
    """The precision a precision plugin of class ``cls`` runs: fixed by its class, or its argument."""
    fixed = classes[cls].precision if cls else None
    return plugin.arg("precision", fixed) if cls in facts.PRECISION_FROM_ARGUMENT else fixed


def _plugin_is_a(value: Any, ancestor: str) -> bool:
    return class_is_a(_plugin_class(value), ancestor, facts.PLUGIN_CLASSES)


def _plugin_precision(plugin: Obj) -> str | None:
    return plugin_precision(plugin, _plugin_class(plugin), facts.PLUGIN_CLASSES)


# ---------------------------------------------------------------------------------- the checks
class _Raised(Exception):
    def __init__(self, type_: str, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.type = type_
        self.message = message
        self.where = where


def _python(fn: Callable[..., Any], *args: Any, where: str | None = None) -> Any:
    """Call a builtin the connector calls (``int``), turning its error into the connector's."""
    try:
        return fn(*args)
    except (TypeError, ValueError) as exc:
        raise _Raised(type(exc).__name__, str(exc), where) from None


#: ``file:line`` of the raises in Lightning's shared parsers (``lightning/fabric/``).
_DP = "lightning/fabric/utilities/device_parser.py:"
_XLA_PARSER = "lightning/fabric/accelerators/xla.py:"


@dataclass
class _Strategy:
    cls: str  # class name as given
    base: str  # Fabric class
    start_method: str = "popen"
    parallel_devices: list[str] = field(default_factory=list)
    cluster_environment: Obj | None = None
    device: str | None = None


class _Connector:
    """``_Connector.__init__`` step by step, on plain values (names follow Lightning's)."""

    def __init__(self, host: Host, env: dict[str, str]) -> None:
        self.host = host
        self.env = env
        self.warnings: list[str] = []
        self.strategy_flag: Any = "auto"
        self.accelerator_flag: Any = "auto"
        self.precision_input: Any = "32-true"
        self.precision_instance: Obj | None = None
        self.cluster_environment_flag: Obj | None = None
        self.parallel_devices: list[str] = []
        self.checkpoint_io: Obj | None = None
        self.devices_flag: Any = "auto"
        self.num_nodes_flag = 1
        self.accelerator = ""
        self.accelerator_kind = ""
        self.cluster_environment = "LightningEnvironment"
        self.cluster_external = False
        self.strategy: _Strategy | None = None
        self.precision: tuple[str, str | None] | None = None
        self.launcher = Launcher.NONE

    def construct(self, value: Any) -> None:
        """The user's code building the objects it passes: Fabric's XLA classes need torch_xla."""
        if isinstance(value, (list, tuple)):
            for item in value:
                self.construct(item)
        elif isinstance(value, Obj):
            for _, arg in value.args:
                self.construct(arg)
            if value.fabric and (value.cls in facts.XLA_CLASSES or value.base in facts.XLA_CLASSES):
                self._require_xla()

    def _require_xla(self) -> None:
        if not self.host.tpu:
            raise _Raised("ModuleNotFoundError", facts.TORCH_XLA_MISSING)

    def connect(self, a: FabricArgs) -> None:
        accelerator = self._argument_from_env("accelerator", a.accelerator, "auto")
        strategy = self._argument_from_env("strategy", a.strategy, "auto")
        devices = self._argument_from_env("devices", a.devices, "auto")
        num_nodes = _python(int, self._argument_from_env("num_nodes", a.num_nodes, 1))
        precision = self._argument_from_env("precision", a.precision, None)
        self._check_config(strategy, accelerator, precision, a.plugins)
        self._check_devices(devices, num_nodes)
        if self.accelerator_flag == "auto":
            self.accelerator_flag = self._choose_auto_accelerator()
        elif self.accelerator_flag == "gpu":
            self.accelerator_flag = self._choose_gpu_accelerator_backend()
        self._init_accelerator()
        self._choose_cluster_environment()
        if self.strategy_flag == "auto":
            self.strategy_flag = self._choose_strategy()
        self._check_strategy_and_fallback()
        self.strategy = self._init_strategy()
        self.precision = self._check_and_init_precision()
        self._lazy_init_strategy(self.strategy)

    def outcome(self) -> Outcome:
        s = self.strategy
        assert s is not None and self.precision is not None
        devices = (s.device,) if s.device is not None else tuple(self.parallel_devices)
        return Outcome(
            host=self.host,
            warnings=tuple(self.warnings),
            strategy=s.cls,
            strategy_base=s.base,
            accelerator=self.accelerator,
            devices=devices,
            num_nodes=self.num_nodes_flag,
            precision=self.precision[1],
            precision_plugin=self.precision[0],
            launcher=self.launcher,
            cluster_environment=self.cluster_environment if _is_a(s.base, "ParallelStrategy") else None,
        )

    # -- LT_* variables (connector.py:_argument_from_env) ----------------------------------------
    def _argument_from_env(self, name: str, current: Any, default: Any) -> Any:
        env_value = self.env.get("LT_" + name.upper())
        if env_value is None:
            return current
        if env_value != str(current) and str(current) != str(default) and self._is_using_cli():
            raise _Raised(
                "ValueError",
                f"Your code has `Fabric({name}={current!r}, ...)` but it conflicts with the value "
                f"`--{name}={env_value}` set through the CLI. "
                " Remove it either from the CLI or from the Lightning Fabric object.",
            )
        return env_value

    def _is_using_cli(self) -> bool:
        return bool(_python(int, self.env.get("LT_CLI_USED", "0")))

    # -- strategy, accelerator, precision, plugins ----------------------------------------------
    def _check_config(self, strategy: Any, accelerator: Any, precision: Any, plugins: Any) -> None:
        if plugins is not None:
            plugins = plugins if isinstance(plugins, Iterable) else [plugins]
        if isinstance(strategy, str):
            strategy = strategy.lower()
        self.strategy_flag = strategy
        self._check_names(strategy, accelerator)
        self._check_mps(strategy, accelerator)
        self.accelerator_flag = accelerator
        precision_input = self._convert_precision(precision)
        if plugins:
            self._read_plugins(plugins, precision_input)
        self.precision_input = "32-true" if precision_input is None else precision_input
        if _strategy_class(self.strategy_flag):
            self._read_strategy_instance(self.strategy_flag)

    def _check_names(self, strategy: Any, accelerator: Any) -> None:
        if strategy != "auto" and strategy not in list(facts.STRATEGY_REGISTRY) and not _strategy_class(strategy):
            raise _Raised(
                "ValueError",
                f"You selected an invalid strategy name: `strategy={strategy!r}`."
                " It must be either a string or an instance of `lightning.fabric.strategies.Strategy`."
                " Example choices: auto, ddp, ddp_spawn, deepspeed, dp, ..."
                " Find a complete list of options in our documentation at https://lightning.ai",
            )
        registered = sorted(facts.ACCELERATOR_REGISTRY)
        if accelerator not in registered and accelerator not in ("auto", "gpu") and not _accelerator_class(accelerator):
            raise _Raised(
                "ValueError",
                f"You selected an invalid accelerator name: `accelerator={accelerator!r}`."
                f" Available names are: auto, {', '.join(registered)}.",
            )

    def _check_mps(self, strategy: Any, accelerator: Any) -> None:
        is_str = isinstance(strategy, str)
        is_parallel = (
            _strategy_class(strategy) is not None and _is_a(_strategy_class(strategy) or "", "ParallelStrategy")
        ) or (is_str and ("ddp" in strategy or "dp" in strategy or "deepspeed" in strategy))
        is_mps = self.host.mps and (
            accelerator in ("mps", "auto", "gpu", None) or _accelerator_class(accelerator) == "MPSAccelerator"
        )
        if is_mps and is_parallel:
            raise _Raised(
                "ValueError",
                f"You set `strategy={strategy}` but strategies from the DDP family are not supported on the"
                f" MPS accelerator. Either explicitly set `accelerator='cpu'` or change the strategy.",
            )

    def _convert_precision(self, precision: Any) -> str | None:
        """``_convert_precision_to_unified_args``."""
        if precision is None:
            return None
        if precision not in facts.PRECISION_INPUTS:
            raise _Raised(
                "ValueError",
                f"Precision {precision!r} is invalid. Allowed precision values: {facts.PRECISION_INPUTS}",
            )
        precision = str(precision)
        if precision in facts.PRECISION_ALIASES:
            if precision[:2] not in ("32", "64"):
                self.warnings.append(
                    f"`precision={precision}` is supported for historical reasons but its usage is discouraged. "
                    f"Please set your precision to {facts.PRECISION_ALIASES[precision]} instead!"
                )
            precision = facts.PRECISION_ALIASES[precision]
        return precision

    def _read_plugins(self, plugins: Iterable[Any], precision_input: str | None) -> None:
        kinds: Counter[str] = Counter()
        for plugin in plugins:
            cls = _plugin_class(plugin)
            if cls is None:
                raise _Raised(
                    "TypeError",
                    f"Found invalid type for plugin {plugin}. Expected one of: Precision, "
                    "CheckpointIO, ClusterEnvironment.",
                )
            category = facts.PLUGIN_CLASSES[cls].category
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
                "ValueError",
                f"Received multiple values for {', '.join(duplicated)} flags in `plugins`."
                " Expected one value for each type at most.",
            )
        if kinds.get("Precision") and precision_input is not None:
            raise _Raised(
                "ValueError",
                f"Received both `precision={precision_input}` and `plugins={self.precision_instance}`. Choose one.",
            )

    def _read_strategy_instance(self, strategy: Obj) -> None:
        for name in ("accelerator", "precision", "checkpoint_io"):
            self._take_from_strategy(strategy, name)
        own = self._strategy_cluster_environment(strategy)
        if own is not None:
            if self.cluster_environment_flag is not None:
                raise _Raised(
                    "ValueError", "cluster_environment set through both strategy class and plugins, choose one"
                )
            self.cluster_environment_flag = own
        devices = (
            strategy.arg("parallel_devices") if _is_a(_strategy_class(strategy) or "", "ParallelStrategy") else None
        )
        if devices:
            self._take_parallel_devices(strategy, list(devices))

    def _take_from_strategy(self, strategy: Obj, name: str) -> None:
        value = strategy.arg(name)
        if not value:
            return
        if name == "accelerator":
            if self.accelerator_flag != "auto":
                raise _Raised(
                    "ValueError", "accelerator set through both strategy class and accelerator flag, choose one"
                )
            self.accelerator_flag = value
        elif name == "precision":
            if self.precision_instance:
                raise _Raised("ValueError", "precision set through both strategy class and plugins, choose one")
            self.precision_instance = value
        else:
            if self.checkpoint_io:
                raise _Raised("ValueError", "checkpoint_io set through both strategy class and plugins, choose one")
            self.checkpoint_io = value

    @staticmethod
    def _strategy_cluster_environment(strategy: Obj) -> Obj | None:
        cls = _strategy_class(strategy) or ""
        if not _is_a(cls, "ParallelStrategy"):
            return None
        for c in _strategy_chain(cls):
            if c in facts.STRATEGIES_OWN_CLUSTER_ENVIRONMENT:
                return Obj(facts.STRATEGIES_OWN_CLUSTER_ENVIRONMENT[c])
        return strategy.arg("cluster_environment")

    def _take_parallel_devices(self, strategy: Obj, devices: list[str]) -> None:
        device_type = devices[0].split(":")[0]
        for kind, allowed, label in (("cpu", ("auto", "cpu"), "CPU"), ("cuda", ("auto", "cuda", "gpu"), "GPU")):
            if device_type != kind:
                continue
            if self.accelerator_flag and self.accelerator_flag not in allowed:
                raise _Raised(
                    "ValueError",
                    f"{label} parallel_devices set through {strategy.cls} class,"
                    f" but accelerator set to {self.accelerator_flag}, please choose one device type",
                )
            self.accelerator_flag = kind
        self.parallel_devices = devices

    def _check_devices(self, devices: Any, num_nodes: Any) -> None:
        if not isinstance(num_nodes, int) or num_nodes < 1:
            raise _Raised("ValueError", f"`num_nodes` must be a positive integer, but got {num_nodes}.")
        self.num_nodes_flag = num_nodes
        self.devices_flag = devices
        if devices in ([], 0, "0"):
            flag = self.accelerator_flag
            name = flag.cls if isinstance(flag, Obj) else flag
            raise _Raised(
                "ValueError", f"`Fabric(devices={devices!r})` value is not a valid input using {name} accelerator."
            )

    # -- accelerator and devices ---------------------------------------------------------------
    def _choose_auto_accelerator(self) -> str:
        if self.host.tpu:
            return "tpu"
        if self.host.mps:
            return "mps"
        return "cuda" if self.host.cuda else "cpu"

    def _choose_gpu_accelerator_backend(self) -> str:
        if self.host.mps:
            return "mps"
        if self.host.cuda:
            return "cuda"
        raise _Raised("RuntimeError", "No supported gpu backend found!")

    def _available(self, accelerator_class: str) -> bool:
        return {
            "CPUAccelerator": True,
            "CUDAAccelerator": self.host.cuda > 0,
            "MPSAccelerator": self.host.mps,
            "XLAAccelerator": self.host.tpu > 0,
        }[accelerator_class]

    def _init_accelerator(self) -> None:
        flag = self.accelerator_flag
        if isinstance(flag, Obj):
            self.accelerator = flag.cls
            kind = _accelerator_class(flag) or flag.cls
        else:
            self.accelerator = kind = facts.ACCELERATOR_REGISTRY[flag]
            if kind in facts.XLA_CLASSES:
                self._require_xla()
        if not self._available(kind):
            names = [n for n in sorted(facts.ACCELERATOR_REGISTRY) if self._available(facts.ACCELERATOR_REGISTRY[n])]
            raise _Raised(
                "RuntimeError",
                f"`{self.accelerator}` can not run on your system"
                " since the accelerator is not available. The following accelerator(s)"
                " is available and can be passed into `accelerator` argument of"
                f" `Fabric`: {names}.",
            )
        if self.devices_flag == "auto":
            self.devices_flag = self._auto_device_count(kind)
        parse = _DEVICE_PARSERS[kind]
        self.devices_flag = parse(self, self.devices_flag)
        if not self.parallel_devices:
            self.parallel_devices = _PARALLEL_DEVICES[kind](self, self.devices_flag)
        self.accelerator_kind = kind

    def _auto_device_count(self, kind: str) -> int:
        if kind == "CUDAAccelerator":
            return 1 if self.host.interactive and self.host.cuda > 1 else self.host.cuda
        return self.host.tpu if kind == "XLAAccelerator" else 1

    def _parse_cpu_cores(self, devices: Any) -> int:
        if isinstance(devices, str) and devices.strip().isdigit():
            devices = int(devices)
        if not isinstance(devices, int) or devices <= 0:
            raise _Raised(
                "TypeError",
                "`devices` selected with `CPUAccelerator` should be an int > 0.",
                "lightning/fabric/accelerators/cpu.py:99",
            )
        return devices

    def _all_gpus(self, kind: str) -> list[int]:
        return list(range(self.host.cuda)) if kind == "CUDAAccelerator" else ([0] if self.host.mps else [])

    def _parse_gpu_ids(self, devices: Any, kind: str) -> list[int] | None:
        _check_data_type(devices)
        if (isinstance(devices, int) and devices == 0) or str(devices).strip() in ("0", "[]"):
            return None
        if isinstance(devices, str):
            devices = _normalize_gpu_string(devices)
        gpus = self._gpus_to_list(devices, kind)
        if not gpus:
            raise _Raised("MisconfigurationException", "GPUs requested but none are available.", _DP + "89")
        available = self._all_gpus(kind)
        if facts.TORCHELASTIC_VARIABLE in self.env and len(gpus) != 1 and len(available) == 1:
            return gpus
        if len(gpus) != len(set(gpus)):
            raise _Raised("MisconfigurationException", "Device ID's (GPU) must be unique.", _DP + "183")
        for gpu in gpus:
            if gpu not in available:
                raise _Raised(
                    "MisconfigurationException",
                    f"You requested gpu: {gpus}\n But your machine only has: {available}",
                    _DP + "136",
                )
        return gpus

    def _gpus_to_list(self, devices: Any, kind: str) -> list[int] | None:
        if isinstance(devices, (list, tuple)):
            return list(devices)
        if not devices:
            return None
        return self._all_gpus(kind) if devices == -1 else list(range(devices))

    def _parse_tpu_devices(self, devices: Any) -> Any:
        _check_data_type(devices)
        if isinstance(devices, str):
            devices = _parse_tpu_devices_str(devices)
        count = self.host.tpu
        single = isinstance(devices, (list, tuple)) and len(devices) == 1 and 0 <= devices[0] <= count - 1
        if not (isinstance(devices, int) and devices in {1, count}) and not single:
            raise _Raised(
                "ValueError",
                f"`devices` can only be 'auto', 1, {count} or [<0-{count - 1}>] for TPUs. Got {devices!r}",
                _XLA_PARSER + "166",
            )
        return devices

    def _cuda_devices(self, devices: Any) -> list[str]:
        if devices is None:
            raise _Raised("TypeError", "'NoneType' object is not iterable")
        return [f"cuda:{i}" for i in devices]

    def _mps_devices(self, devices: Any) -> list[str]:
        parsed = self._parse_gpu_ids(devices, "MPSAccelerator")  # a parsed list again: never None here
        assert parsed is not None
        return [f"mps:{i}" for i in range(len(parsed))]

    def _tpu_devices(self, devices: Any) -> list[str]:
        devices = self._parse_tpu_devices(devices)
        if isinstance(devices, int):
            return [f"xla:{i}" for i in range(devices)]
        return [f"xla:{devices[0]}"]

    # -- cluster environment and strategy ------------------------------------------------------
    def _choose_cluster_environment(self) -> None:
        flag = self.cluster_environment_flag
        if flag is not None:
            self._set_cluster_environment(flag.cls, _plugin_class(flag) or flag.cls)
            return
        env = self.env
        if facts.TORCHELASTIC_VARIABLE in env:
            self._set_cluster_environment("TorchElasticEnvironment")
        elif facts.SLURM_VARIABLE in env and env.get("SLURM_JOB_NAME") not in facts.SLURM_INTERACTIVE_JOB_NAMES:
            ntasks = _python(int, env.get(facts.SLURM_VARIABLE, "1"))
            if ntasks > 1 and "SLURM_NTASKS_PER_NODE" not in env:
                raise _Raised(
                    "RuntimeError",
                    f"You set `--ntasks={ntasks}` in your SLURM bash script, but this variable is not supported."
                    f" HINT: Use `--ntasks-per-node={ntasks}` instead.",
                    "lightning/fabric/" + facts.SLURM_NTASKS_CHECK,
                )
            self._set_cluster_environment("SLURMEnvironment")
        elif all(v in env for v in facts.LSF_VARIABLES):
            self._set_cluster_environment("LSFEnvironment")
        else:
            self._set_cluster_environment("LightningEnvironment")

    def _set_cluster_environment(self, cls: str, base: str | None = None) -> None:
        self.cluster_environment = cls
        external = facts.PLUGIN_CLASSES[base or cls].external
        self.cluster_external = "LOCAL_RANK" in self.env if external is None else external

    def _choose_strategy(self) -> Any:
        flag = self.accelerator_flag
        if flag == "tpu" or _accelerator_class(flag) == "XLAAccelerator":
            if len(self.parallel_devices) > 1:
                return "xla"
            return Obj("SingleDeviceXLAStrategy", args=(("device", self.parallel_devices[0]),))
        if self.num_nodes_flag > 1:
            return "ddp"
        if len(self.parallel_devices) <= 1:
            gpu = _accelerator_class(flag) in ("CUDAAccelerator", "MPSAccelerator") or flag in ("cuda", "gpu", "mps")
            device = self.parallel_devices[0] if gpu else "cpu"
            return Obj("SingleDeviceStrategy", args=(("device", device),))
        return "ddp_fork" if self.host.interactive else "ddp"

    def _check_strategy_and_fallback(self) -> None:
        flag = "" if _strategy_class(self.strategy_flag) else self.strategy_flag
        if flag == "fsdp" and self.accelerator_flag == "tpu":
            flag = "xla_fsdp"
        if flag == "dp" and self.accelerator_flag == "cpu":
            self.warnings.append(f"{flag!r} is not supported on CPUs, hence setting `strategy='ddp'`.")
            flag = "ddp"
        if flag in facts.DDP_FORK_ALIASES and "fork" not in self.host.start_methods:
            raise _Raised(
                "ValueError",
                f"You selected `Fabric(strategy='{flag}')` but process forking is not supported on this"
                f" platform. We recommend `Fabric(strategy='ddp_spawn')` instead.",
            )
        exact_fsdp = isinstance(self.strategy_flag, Obj) and self.strategy_flag.cls == "FSDPStrategy"
        if (flag in facts.FSDP_ALIASES or exact_fsdp) and self.accelerator_flag not in ("cuda", "gpu"):
            raise _Raised(
                "ValueError",
                "You selected the FSDP strategy but FSDP is only available on GPU. Set `Fabric(accelerator='gpu', ...)`"
                " to continue or select a different strategy.",
            )
        if flag:
            self.strategy_flag = flag

    def _init_strategy(self) -> _Strategy:
        flag = self.strategy_flag
        if isinstance(flag, str):
            cls, params = facts.STRATEGY_REGISTRY[flag]
            if cls in facts.STRATEGY_REQUIRED_ARGUMENTS:
                owner, argument = facts.STRATEGY_REQUIRED_ARGUMENTS[cls]
                raise _Raised("TypeError", f"{owner}.__init__() missing 1 required positional argument: '{argument}'")
            if cls in facts.XLA_CLASSES:
                self._require_xla()
            own = facts.STRATEGIES_OWN_CLUSTER_ENVIRONMENT.get(cls)
            return _Strategy(
                cls,
                cls,
                start_method=str(params.get("start_method", "popen")),
                cluster_environment=Obj(own) if own else None,
            )
        base = _strategy_class(flag)
        assert base is not None
        device = _single_device(base, flag.arg("device"))
        strategy = _Strategy(flag.cls, base, start_method=flag.arg("start_method", "popen"), device=device)
        if _is_a(base, "ParallelStrategy"):
            strategy.parallel_devices = list(flag.arg("parallel_devices") or [])
            strategy.cluster_environment = self._strategy_cluster_environment(flag)
        return strategy

    # -- precision -----------------------------------------------------------------------------
    def _check_and_init_precision(self) -> tuple[str, str | None]:
        assert self.strategy is not None
        base = self.strategy.base
        plugin = self.precision_instance
        if plugin is not None:
            if _plugin_is_a(plugin, "BitsandbytesPrecision") and self.accelerator_kind != "CUDAAccelerator":
                raise _Raised("RuntimeError", "Bitsandbytes is only supported on CUDA GPUs.")
            return plugin.cls, _plugin_precision(plugin)
        for cls, plugin_cls in (
            ("SingleDeviceXLAStrategy", "XLAPrecision"),
            ("XLAStrategy", "XLAPrecision"),
            ("XLAFSDPStrategy", "XLAPrecision"),
            ("DeepSpeedStrategy", "DeepSpeedPrecision"),
            ("FSDPStrategy", "FSDPPrecision"),
        ):
            if _is_a(base, cls):
                return plugin_cls, self._strategy_precision(plugin_cls)
        if _is_a(base, "ModelParallelStrategy") and self.precision_input not in facts.MODEL_PARALLEL_PRECISIONS:
            raise _Raised(
                "ValueError",
                f"The `ModelParallelStrategy` does not support `Fabric(..., precision={self.precision_input!r})`."
                f" Choose a different precision among: {', '.join(facts.MODEL_PARALLEL_PRECISIONS)}.",
            )
        return self._generic_precision()

    def _strategy_precision(self, plugin_cls: str) -> str:
        name, accepted = facts.PRECISION_PLUGIN_ACCEPTS[plugin_cls]
        if self.precision_input not in accepted:
            raise _Raised(
                "ValueError",
                f"`precision={self.precision_input!r})` is not supported in {name}."
                f" `precision` must be one of: {accepted}.",
            )
        return str(self.precision_input)

    def _generic_precision(self) -> tuple[str, str | None]:
        if self.precision_input == "16-mixed" and self.accelerator_flag == "cpu":
            self.warnings.append(
                "You passed `Fabric(accelerator='cpu', precision='16-mixed')` but AMP with fp16 is not supported on "
                "CPU. Using `precision='bf16-mixed'` instead."
            )
            self.precision_input = "bf16-mixed"
        cls = facts.GENERIC_PRECISION_PLUGINS.get(self.precision_input)
        if cls is None:
            raise _Raised("RuntimeError", "No precision set")
        fixed = facts.PLUGIN_CLASSES[cls].precision
        return cls, fixed if cls in (
            "Precision",
            "DoublePrecision",
            "TransformerEnginePrecision",
        ) else self.precision_input

    # -- strategy, part 2 ----------------------------------------------------------------------
    def _lazy_init_strategy(self, s: _Strategy) -> None:
        self._check_precision_plugin(s)
        self._check_checkpoint_io(s)
        if _is_a(s.base, "ParallelStrategy"):
            if s.cluster_environment is not None:
                cls = s.cluster_environment
                self._set_cluster_environment(cls.cls, _plugin_class(cls) or cls.cls)
            if s.parallel_devices:
                self.parallel_devices = s.parallel_devices
        self.launcher = self._configure_launcher(s)
        if self.host.interactive and self.launcher.value not in (Launcher.NONE.value, *facts.INTERACTIVE_LAUNCHERS):
            raise _Raised(
                "RuntimeError",
                f"`Fabric(strategy={self.strategy_flag!r})` is not compatible with an interactive"
                " environment. Run your code as a script, or choose one of the compatible strategies:"
                " `Fabric(strategy='dp'|'ddp_notebook')`."
                " In case you are spawning processes yourself, make sure to include the Fabric"
                " creation inside the worker function.",
            )
        xla_strategy = any(_is_a(s.base, c) for c in ("SingleDeviceXLAStrategy", "XLAStrategy", "XLAFSDPStrategy"))
        if self.accelerator_kind == "XLAAccelerator" and not xla_strategy:
            raise _Raised(
                "ValueError",
                "The `XLAAccelerator` can only be used with a `SingleDeviceXLAStrategy`, `XLAStrategy`, or"
                f" `XLAFSDPStrategy`. Found {s.cls}.",
            )

    def _check_precision_plugin(self, s: _Strategy) -> None:
        assert self.precision is not None
        for cls in _strategy_chain(s.base):
            required = facts.STRATEGY_CLASS_FACTS[cls].precision_plugin
            if required is None:
                continue
            plugin = self.precision_instance or Obj(self.precision[0])
            if not _plugin_is_a(plugin, required):
                name = facts.STRATEGY_PRECISION_SETTER_NAME[cls]
                raise _Raised(
                    "TypeError", f"The {name} strategy can only work with the `{required}` plugin, found {plugin}"
                )
            return

    def _check_checkpoint_io(self, s: _Strategy) -> None:
        io = self.checkpoint_io
        if not io:
            return
        for cls in _strategy_chain(s.base):
            rule = facts.STRATEGY_CLASS_FACTS[cls].checkpoint_io
            if rule == "none":
                raise _Raised("NotImplementedError", f"The `{s.cls}` does not support setting a `CheckpointIO` plugin.")
            if rule == "xla" and not _plugin_is_a(io, "XLACheckpointIO"):
                raise _Raised(
                    "TypeError", f"The XLA strategy can only work with the `XLACheckpointIO` plugin, found {io}"
                )
            if rule != "any":
                return

    def _configure_launcher(self, s: _Strategy) -> Launcher:
        rule = next(
            (facts.STRATEGY_CLASS_FACTS[c].launcher for c in _strategy_chain(s.base) if c in _LAUNCHER_OWNERS), "none"
        )
        if rule == "ddp":
            if s.start_method == "popen":
                return Launcher.SUBPROCESS_SCRIPT
            if s.start_method not in self.host.start_methods:
                raise _Raised(
                    "ValueError",
                    f"The start method '{s.start_method}' is not available on this platform. Available methods are:"
                    f" {', '.join(self.host.start_methods)}",
                )
            return Launcher(s.start_method)
        if rule == "script":
            return Launcher.NONE if self.cluster_external else Launcher.SUBPROCESS_SCRIPT
        return Launcher.XLA if rule == "xla" else Launcher.NONE


#: Strategy classes that define ``_configure_launcher`` (subclasses inherit it).
_LAUNCHER_OWNERS = frozenset(c for c, f in facts.STRATEGY_CLASS_FACTS.items() if f.launcher != "none")


def _single_device(strategy: str, device: Any) -> str | None:
    """The root device of a single-device strategy, as ``torch.device`` prints it."""
    if device is None:
        return None
    if _is_a(strategy, "SingleDeviceXLAStrategy"):  # the device's index picks the XLA device
        return f"xla:{device if isinstance(device, int) else str(device).rpartition(':')[2] or 0}"
    return f"cuda:{device}" if isinstance(device, int) else str(device)


def _check_data_type(devices: Any) -> None:
    """``device_parser._check_data_type``."""
    msg = "Device IDs (GPU/TPU) must be an int, a string, a sequence of ints, but you passed"
    if devices is None:
        raise _Raised("TypeError", f"{msg} None", _DP + "199")
    if isinstance(devices, (list, tuple)):
        for id_ in devices:
            if type(id_) is not int:
                raise _Raised("TypeError", f"{msg} a sequence of {type(id_).__name__}.", _DP + "204")
    elif type(devices) not in (int, str):
        raise _Raised("TypeError", f"{msg} {devices!r}.", _DP + "206")


def _normalize_gpu_string(s: str) -> Any:
    if s == "-1":
        return -1
    if "," in s:
        return [_python(int, x.strip(), where=_DP + "112") for x in s.split(",") if len(x) > 0]
    return _python(int, s.strip(), where=_DP + "113")


def _parse_tpu_devices_str(devices: str) -> Any:
    devices = devices.strip()
    try:
        return int(devices)
    except ValueError:
        try:
            return [int(x.strip()) for x in devices.split(",") if len(x) > 0]
        except ValueError:
            raise _Raised(
                "ValueError", f"Could not parse the selected TPU devices: {devices!r}", _XLA_PARSER + "179"
            ) from None


_DEVICE_PARSERS: dict[str, Callable[[_Connector, Any], Any]] = {
    "CPUAccelerator": _Connector._parse_cpu_cores,
    "CUDAAccelerator": lambda c, d: c._parse_gpu_ids(d, "CUDAAccelerator"),
    "MPSAccelerator": lambda c, d: c._parse_gpu_ids(d, "MPSAccelerator"),
    "XLAAccelerator": _Connector._parse_tpu_devices,
}
_PARALLEL_DEVICES: dict[str, Callable[[_Connector, Any], list[str]]] = {
    "CPUAccelerator": lambda c, d: ["cpu"] * c._parse_cpu_cores(d),
    "CUDAAccelerator": lambda c, d: c._cuda_devices(d),  # through the instance: the Trainer's mirror overrides it
    "MPSAccelerator": _Connector._mps_devices,
    "XLAAccelerator": _Connector._tpu_devices,
}
