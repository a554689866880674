"""Runtime proof for FAB008 on CPU: each configuration it reports fails in real Lightning 2.6.6
with the exact message the finding quotes, and each safe fix gives a script that runs without
Lightning's warning.

Only configurations that fail on a CPU machine can be run here: the checks that need a CUDA
machine (DeepSpeed's GPU indices, ``precision=16`` with ``accelerator="cuda"``) are held to the
source only (the connector adapter's recorded table, ``tests/engine/test_lightning_adapter.py``).
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.runtime, pytest.mark.timeout(1500)]  # the first test may install the venv

HEAD = "import torch\nimport lightning as L\nfrom lightning.fabric.strategies import ModelParallelStrategy\n"

#: name → (the Fabric code, the expected severity); each must fail with the finding's message
FAILING = {
    "invalid_strategy_name": ('fabric = L.Fabric(strategy="ddp_sharded")', "error"),
    "deepspeed_precision": ('fabric = L.Fabric(strategy="deepspeed", precision="64-true")', "error"),
    "devices_zero": ("fabric = L.Fabric(devices=0)", "error"),
    "cpu_device_list": ('fabric = L.Fabric(accelerator="cpu", devices=[0, 1])', "error"),
    "fsdp_on_cpu": ('fabric = L.Fabric(accelerator="cpu", strategy="fsdp")', "error"),
    "deepspeed_on_cpu": (
        'fabric = L.Fabric(accelerator="cpu", strategy="deepspeed", devices=1)\nfabric.launch()',
        "error",
    ),
    "model_parallel_sizes": (
        "def parallelize(model, mesh):\n    return model\n"
        "strategy = ModelParallelStrategy(parallelize, data_parallel_size=2, tensor_parallel_size=1)\n"
        'fabric = L.Fabric(accelerator="cpu", devices=1, strategy=strategy)\nfabric.launch()',
        "error",
    ),
    "precision_in_one_branch": (
        'import os\nuse_bf16 = os.environ.get("USE_BF16") == "1"\n'
        'fabric = L.Fabric(accelerator="cpu", precision="bf16-mixed" if use_bf16 else "fp16")',
        "warning",
    ),
    # a module constant decides the branch: the fp16 one is what runs
    "precision_by_a_module_constant": (
        'use_bf16 = False\nfabric = L.Fabric(accelerator="cpu", precision="bf16-mixed" if use_bf16 else "fp16")',
        "error",
    ),
}

#: name → (the Fabric code, Lightning's warning that the fix removes)
FIXED = {
    "legacy_precision_on_cpu": (
        'fabric = L.Fabric(accelerator="cpu", precision=16)',
        "supported for historical reasons",
    ),
    "fp16_mixed_on_cpu": (
        'fabric = L.Fabric(accelerator="cpu", precision="16-mixed")',
        "AMP with fp16 is not supported",
    ),
}

TRAIN = textwrap.dedent(
    """
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    fabric.backward(model(torch.randn(2, 4)).sum())
    optimizer.step()
    print("RUNTIME-OK")
    """
)


def _findings(fabric_lsp, script: Path) -> list[dict]:
    run = fabric_lsp("check", "--select", "FAB008", "--format", "json", str(script), cwd=script.parent)
    data = json.loads(run.stdout or "[]")
    items = data["findings"] if isinstance(data, dict) else data
    return [f for f in items if f.get("code") == "FAB008"]


@pytest.mark.parametrize("name", sorted(FAILING))
def test_reported_configuration_fails_with_the_quoted_message(name, tmp_path, run_script, fabric_lsp):
    code, severity = FAILING[name]
    script = tmp_path / f"{name}.py"
    script.write_text(HEAD + code + "\n" + TRAIN)
    (finding,) = _findings(fabric_lsp, script)
    assert finding["severity"] == severity
    run = run_script(script)
    assert run.returncode != 0 and "RUNTIME-OK" not in run.stdout, run.explain()
    last = [line for line in run.stderr.strip().splitlines() if line.strip()][-1]
    last = re.sub(r"^\[rank\d+\]: ", "", last)  # torch prefixes the traceback of a distributed process
    error_type, _, message = last.partition(": ")
    assert f"{error_type}: {message}" in finding["message"], run.explain()


@pytest.mark.parametrize("name", sorted(FIXED))
def test_safe_fix_gives_a_script_without_the_warning(name, tmp_path, run_script, fabric_lsp):
    code, warning = FIXED[name]
    script = tmp_path / f"{name}.py"
    script.write_text(HEAD + code + "\n" + TRAIN)
    (finding,) = _findings(fabric_lsp, script)
    assert finding["severity"] == "warning"
    before = run_script(script)
    assert before.returncode == 0 and warning in before.stderr, before.explain()
    fixed = fabric_lsp("check", "--select", "FAB008", "--fix", str(script), cwd=tmp_path)
    assert _findings(fabric_lsp, script) == [], fixed.stdout + fixed.stderr
    assert '"bf16-mixed"' in script.read_text()
    after = run_script(script)
    assert after.returncode == 0 and "RUNTIME-OK" in after.stdout, after.explain()
    assert warning not in after.stderr, after.explain()
