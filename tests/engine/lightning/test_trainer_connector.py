"""``fabric_lsp.engine.lightning.trainer`` against the real Lightning 2.6.6 Trainer connector.

``tests/data/trainer_connector_outcomes.json`` is recorded from the real ``_AcceleratorConnector`` by
``scripts/gen_trainer_connector_table.py``; every row must come out the same from the mirror (fast,
no torch), errors with their type, message and the Lightning ``file:line`` that raises. The
``runtime`` test re-records the table and asserts it did not change.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fabric_lsp import facts
from fabric_lsp.engine.lightning.connector import Host, Launcher, Obj
from fabric_lsp.engine.lightning.trainer import TrainerArgs, TrainerOutcome, resolve, resolve_per_host
from fabric_lsp.facts import Kind

ROOT = Path(__file__).resolve().parents[3]
TABLE = ROOT / "tests" / "data" / "trainer_connector_outcomes.json"
GENERATOR = ROOT / "scripts" / "gen_trainer_connector_table.py"
RECORDED = json.loads(TABLE.read_text(encoding="utf-8"))
ROWS: list[dict] = RECORDED["rows"]


def decode(value: Any) -> Any:
    """The table's encoding of an argument → the mirror's plain value / ``Obj``."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not (isinstance(value, dict) and "obj" in value):
        return value
    args = tuple((k, decode(v)) for k, v in value.get("args", {}).items())
    return Obj(value["obj"], args=args, base=value.get("base"), module=value.get("module"))


def host_of(row: dict) -> Host:
    h = dict(row["host"])
    if "start_methods" in h:
        h["start_methods"] = tuple(h["start_methods"])
    return Host(**h)


def as_row(out: TrainerOutcome) -> dict:
    """The mirror's outcome in the table's shape."""
    if out.error is not None:
        return {"error": [out.error.type, out.error.message, out.error.where], "warnings": list(out.warnings)}
    assert out.launcher is not None
    return {
        "strategy": out.strategy,
        "accelerator": out.accelerator,
        "devices": list(out.devices),
        "num_nodes": out.num_nodes,
        "precision_plugin": out.precision_plugin,
        "precision": out.precision,
        "amp_device": out.amp_device,
        "launcher": out.launcher.value,
        "cluster_environment": out.cluster_environment,
        "layer_sync": out.layer_sync,
        "warnings": list(out.warnings),
    }


def _label(row: dict) -> str:
    return json.dumps({k: row[k] for k in ("args", "host", "env") if row[k]}, ensure_ascii=False)[:120]


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}:{_label(r)}" for i, r in enumerate(ROWS)])
def test_mirror_matches_the_real_trainer_connector(row: dict) -> None:
    args = TrainerArgs(**{k: decode(v) for k, v in row["args"].items()})
    assert as_row(resolve(args, host_of(row), row["env"])) == row["outcome"]


def test_table_covers_every_outcome_family() -> None:
    """The grid reaches each raise of the connector that a user can reach and each strategy and launcher."""
    assert RECORDED["lightning"] == facts.LATEST_LIGHTNING
    outcomes = [r["outcome"] for r in ROWS]
    where = {o["error"][2] for o in outcomes if "error" in o}
    unreachable = {"hpu", "no_precision"}  # HPU is not registered; every precision has a plugin
    assert {line for name, line in facts.TRAINER_CONNECTOR_LINES.items() if name not in unreachable} <= where
    strategies = {o["strategy"] for o in outcomes if "strategy" in o}
    assert strategies >= {c for c in facts.TRAINER_STRATEGY_CLASS_FACTS if c not in ("Strategy", "ParallelStrategy")}
    assert {o["launcher"] for o in outcomes if "launcher" in o} == {launcher.value for launcher in Launcher}
    assert any(o.get("warnings") for o in outcomes) and any(o.get("layer_sync") for o in outcomes)
    assert len(ROWS) >= 600


def test_resolve_per_host_and_derived_facts() -> None:
    out = resolve_per_host(TrainerArgs(strategy="fsdp", sync_batchnorm=True))
    assert out["on CPU"].error is not None and out["on CPU"].error.where == facts.TRAINER_CONNECTOR_LINES["fsdp_gpu"]
    cuda = out["on CUDA with 8 devices"]
    assert (cuda.kind, cuda.precision_plugin, cuda.world_size, cuda.layer_sync) == (
        Kind.FSDP,
        "FSDPPrecision",
        8,
        "TorchSyncBatchNorm",
    )
    single = resolve(TrainerArgs(sync_batchnorm=True), Host(cuda=1))
    assert (single.kind, single.layer_sync) == (Kind.SINGLE_DEVICE, None)  # silently dropped
    xla = resolve(TrainerArgs(num_nodes=2), Host(tpu=8))
    assert (xla.kind, xla.launcher, xla.world_size) == (Kind.XLA, Launcher.XLA, 16)


def _runtime_python() -> Path:
    from test_lightning_adapter import _runtime_python as installed

    return installed()


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
    assert fresh["rows"] == ROWS, "the connector's behaviour changed: rerun scripts/gen_trainer_connector_table.py"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
