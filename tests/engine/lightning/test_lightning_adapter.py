"""``fabric_lsp.engine.lightning.connector`` against the real Lightning 2.6.6 connector.

``tests/data/connector_outcomes.json`` is recorded from the real ``_Connector`` by
``scripts/gen_connector_table.py``; every row must come out the same from the adapter (fast, no
torch). The ``runtime`` test re-records the table with the runtime venv and asserts it did not
change, so the table cannot drift from Lightning's source.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ci_env import in_ci
from fabric_lsp import config, facts
from fabric_lsp.engine.lightning.connector import (
    CPU,
    ConnectorError,
    FabricArgs,
    Host,
    Launcher,
    Obj,
    Outcome,
    resolve,
    resolve_per_host,
    resolve_strategy,
)
from fabric_lsp.facts import Kind

ROOT = Path(__file__).resolve().parents[3]
TABLE = ROOT / "tests" / "data" / "connector_outcomes.json"
GENERATOR = ROOT / "scripts" / "gen_connector_table.py"
RECORDED = json.loads(TABLE.read_text(encoding="utf-8"))
ROWS: list[dict] = RECORDED["rows"]


def decode(value: Any) -> Any:
    """The table's encoding of an argument → the adapter's plain value / ``Obj``."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not (isinstance(value, dict) and "obj" in value):
        return value
    args = tuple((k, decode(v)) for k, v in value.get("args", {}).items())
    return Obj(
        value["obj"], args=args, base=value.get("base"), module=value.get("module"), fabric=value.get("fabric", True)
    )


def host_of(row: dict) -> Host:
    h = dict(row["host"])
    if "start_methods" in h:
        h["start_methods"] = tuple(h["start_methods"])
    return Host(**h)


def as_row(out: Outcome) -> dict:
    """The adapter's outcome in the table's shape."""
    if out.error is not None:
        return {"error": [out.error.type, out.error.message], "warnings": list(out.warnings)}
    assert out.launcher is not None
    return {
        "strategy": out.strategy,
        "accelerator": out.accelerator,
        "devices": list(out.devices),
        "num_nodes": out.num_nodes,
        "precision_plugin": out.precision_plugin,
        "precision": out.precision,
        "launcher": out.launcher.value,
        "cluster_environment": out.cluster_environment,
        "warnings": list(out.warnings),
    }


def _label(row: dict) -> str:
    return json.dumps({k: row[k] for k in ("args", "host", "env") if row[k]}, ensure_ascii=False)[:120]


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}:{_label(r)}" for i, r in enumerate(ROWS)])
def test_adapter_matches_the_real_connector(row: dict) -> None:
    args = FabricArgs(**{k: decode(v) for k, v in row["args"].items()})
    assert as_row(resolve(args, host_of(row), row["env"])) == row["outcome"]


def test_table_covers_every_outcome_family() -> None:
    """The grid reaches each error the connector raises and each strategy and launcher."""
    assert RECORDED["lightning"] == facts.LATEST_LIGHTNING
    outcomes = [r["outcome"] for r in ROWS]
    messages = {o["error"][1].split("`")[0][:40] for o in outcomes if "error" in o}
    strategies = {o["strategy"] for o in outcomes if "strategy" in o}
    launchers = {o["launcher"] for o in outcomes if "launcher" in o}
    assert len(messages) >= 40, sorted(messages)
    assert strategies >= {c for c in facts.STRATEGY_CLASS_FACTS if c not in ("Strategy", "ParallelStrategy")}
    assert launchers == {launcher.value for launcher in Launcher}
    assert any(o.get("warnings") for o in outcomes)


# -- the API the rules use -----------------------------------------------------------------------
def test_resolve_per_host_describes_each_assumption() -> None:
    out = resolve_per_host(FabricArgs(strategy="fsdp"))
    assert set(out) == {"on CPU", "on CUDA with 1 device", "on CUDA with 8 devices", "on MPS", "on TPU with 8 devices"}
    assert out["on CPU"].error is not None and out["on CPU"].error.type == "ValueError"
    assert Host(cuda=2, interactive=True, start_methods=("spawn",)).describe() == (
        "on CUDA with 2 devices in a notebook without fork"
    )
    tpu = out["on TPU with 8 devices"]
    assert (tpu.kind, tpu.launcher, tpu.num_processes) == (Kind.XLA_FSDP, Launcher.XLA, 8)
    cuda = out["on CUDA with 8 devices"]
    assert (cuda.kind, cuda.precision_plugin, cuda.world_size, cuda.wraps_module) == (
        Kind.FSDP,
        "FSDPPrecision",
        8,
        True,
    )


def test_resolve_strategy_and_derived_facts() -> None:
    assert resolve_strategy(FabricArgs(strategy="deepspeed"), Host(cuda=2)) == (Kind.DEEPSPEED, "DeepSpeedStrategy")
    assert resolve_strategy(FabricArgs(), CPU) == (Kind.SINGLE_DEVICE, "SingleDeviceStrategy")
    err = resolve_strategy(FabricArgs(strategy="ddp_sharded"))
    assert isinstance(err, ConnectorError) and "invalid strategy name" in err.message
    mp = resolve(FabricArgs(strategy=Obj("ModelParallelStrategy"), num_nodes=2), Host(cuda=4))
    assert (mp.wraps_module, mp.num_processes, mp.world_size, mp.launcher) == (False, 4, 8, Launcher.SUBPROCESS_SCRIPT)
    dp = resolve(FabricArgs(strategy="dp"), Host(cuda=4))
    assert (dp.num_processes, dp.world_size, dp.wraps_module, dp.launcher) == (1, 1, True, Launcher.NONE)
    subclass = resolve(FabricArgs(strategy=Obj("MyDeepSpeed", base="DeepSpeedStrategy")), Host(cuda=2))
    assert (subclass.strategy, subclass.kind) == ("MyDeepSpeed", Kind.DEEPSPEED)


def test_cli_override_is_reported_per_environment() -> None:
    args = FabricArgs(strategy="deepspeed")
    assert resolve(args, Host(cuda=2), {"LT_STRATEGY": "ddp"}).kind is Kind.DDP
    err = resolve(args, Host(cuda=2), {"LT_STRATEGY": "ddp", "LT_CLI_USED": "1"}).error
    assert err is not None and "conflicts with the value `--strategy=ddp`" in err.message


def test_lsf_jobs_create_their_processes() -> None:
    """LSF is detected from jsrun's variables (not in the table: LSFEnvironment reads the rank file and
    this machine's hostname when Lightning builds it)."""
    lsf = {name: "1" for name in facts.LSF_VARIABLES}
    out = resolve(FabricArgs(strategy="fsdp"), Host(cuda=2), lsf)
    assert (out.cluster_environment, out.launcher) == ("LSFEnvironment", Launcher.NONE)
    assert resolve(FabricArgs(strategy="fsdp"), Host(cuda=2)).launcher is Launcher.SUBPROCESS_SCRIPT


# -- versions ------------------------------------------------------------------------------------
def test_version_facts() -> None:
    assert facts.version_tuple("2.3.0rc1") == (2, 3, 0)
    assert facts.has_feature("mark_forward_method") and facts.has_feature("backward_check", "2.3.0")
    assert not facts.has_feature("mark_forward_method", "2.2.5")
    assert facts.has_feature("forward_redirection_error", "2.2.0")
    assert not facts.has_feature("forward_redirection_error", "2.1.4")
    assert config.LATEST_LIGHTNING == facts.LATEST_LIGHTNING == "2.6.6"


def test_installed_version_reads_metadata_without_importing(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    dist = site / "lightning_fabric-2.2.5.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lightning-fabric\nVersion: 2.2.5\n")
    (site / "lightning_fabric").mkdir()
    (site / "lightning_fabric" / "__init__.py").write_text("raise SystemExit('imported')\n")
    assert facts.installed_lightning_version(str(tmp_path)) == "2.2.5"
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.write_text("")
    assert facts.installed_lightning_version(str(python)) == "2.2.5"
    assert facts.installed_lightning_version(str(tmp_path / "missing")) is None
    assert config.installed_lightning_version is facts.installed_lightning_version


def test_installed_version_of_the_standalone_trainer_package(tmp_path: Path) -> None:
    """A project on ``pytorch_lightning`` 1.x: the rules apply 1.9's API (PL004 reports nothing)."""
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    dist = site / "pytorch_lightning-1.9.5.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pytorch-lightning\nVersion: 1.9.5\n")
    assert facts.installed_lightning_version(str(tmp_path)) == "1.9.5"


def test_the_metadata_is_looked_up_only_where_a_distribution_may_be(tmp_path: Path, monkeypatch) -> None:
    """``importlib.metadata`` is asked only where a folder of the path holds a dist-info, egg-info
    or egg of a Lightning distribution, whatever its case and separators; on the running
    interpreter's path as on an environment's."""
    site = tmp_path / "site"
    (site / "torch-2.13.0.dist-info").mkdir(parents=True)
    (site / "lightning_utilities-0.15.2.dist-info").mkdir()
    assert not facts._may_hold_distribution([str(site)])
    monkeypatch.setattr(sys, "path", [str(site)])
    assert not facts._may_hold_distribution(None)
    for name in ("Lightning_Fabric-2.6.6.dist-info", "pytorch_lightning.egg-info", "lightning-2.6.6-py3.11.egg"):
        other = tmp_path / name.lower()
        (other / name).mkdir(parents=True)
        assert facts._may_hold_distribution([str(other)]), name
    (tmp_path / "lib.zip").write_bytes(b"")
    assert facts._may_hold_distribution([str(tmp_path / "lib.zip")])  # a zip on the path: asked


# -- the table itself is Lightning's -------------------------------------------------------------
def _runtime_python() -> Path:
    """The runtime venv's interpreter, made by the same installer the runtime tests use."""
    install = ROOT / ".ci" / "install.d" / "30-runtime.sh"
    python = ROOT / ".venv-runtime" / "bin" / "python"
    proc = subprocess.run(["bash", str(install)], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0 or not python.exists():
        message = f"runtime venv not installed by {install.name}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    return python


@pytest.mark.runtime
def test_table_is_what_lightning_does_today() -> None:
    python = _runtime_python()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LT_", "PYTHON"))}
    env["DS_ACCELERATOR"] = "cpu"
    proc = subprocess.run(
        [str(python), str(GENERATOR), "--stdout"], cwd=ROOT, capture_output=True, text=True, env=env, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    fresh = json.loads(proc.stdout)
    assert fresh["lightning"] == facts.LATEST_LIGHTNING
    assert fresh["rows"] == ROWS, "the connector's behaviour changed: rerun scripts/gen_connector_table.py"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
