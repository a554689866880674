"""The joint-setup facts FAB001's fix relies on (``facts.JOINT_SETUP_REFUSING_ARGUMENTS``,
``facts.META_PARAMETERS_REFUSE_JOINT_SETUP``), checked against real Lightning on CPU.

FSDP runs only through a test-only subclass (Lightning's connector refuses ``type(strategy) is
FSDPStrategy`` on CPU), and with torch 2.13 FSDP itself cannot wrap a module on CPU ("FSDP needs a
non-CPU accelerator device"): the separate setup cannot train here, but both refusals of joint
setup happen before the wrapping, in ``Fabric._validate_setup`` and
``FSDPStrategy.setup_module_and_optimizers``, and are what this test proves.
"""

from __future__ import annotations

import subprocess

import pytest
from fabric_lsp import facts

pytestmark = [pytest.mark.runtime, pytest.mark.timeout(1500)]  # the first test may install the venv

SCRIPT = """
import sys, torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import FSDPStrategy

class CPUFSDPStrategy(FSDPStrategy):
    pass

use_orig_params, empty_init = sys.argv[1] == "True", sys.argv[2] == "True"
fabric = Fabric(accelerator="cpu", devices=1, strategy=CPUFSDPStrategy(use_orig_params=use_orig_params))
fabric.launch()
with fabric.init_module(empty_init=empty_init):
    model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
"""


def _joint_setup(tmp_path, runtime_python, runtime_env, use_orig_params: bool, empty_init: bool) -> str:
    script = tmp_path / "fsdp_joint.py"
    script.write_text(SCRIPT)
    proc = subprocess.run(
        [str(runtime_python), str(script), str(use_orig_params), str(empty_init)],
        cwd=tmp_path,
        env=runtime_env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode != 0, proc.stdout
    return proc.stderr


def test_fsdp_use_orig_params_false_refuses_joint_setup(tmp_path, runtime_python, runtime_env):
    refusing, _, _ = facts.JOINT_SETUP_REFUSING_ARGUMENTS[facts.Kind.FSDP]["use_orig_params"]
    assert refusing == (False,)
    stderr = _joint_setup(tmp_path, runtime_python, runtime_env, use_orig_params=False, empty_init=False)
    assert "ValueError: You set `CPUFSDPStrategy(use_orig_params=False)` but this is not supported when" in stderr


def test_fsdp_joint_setup_refuses_an_optimizer_over_meta_device_parameters(tmp_path, runtime_python, runtime_env):
    assert facts.Kind.FSDP in facts.META_PARAMETERS_REFUSE_JOINT_SETUP
    stderr = _joint_setup(tmp_path, runtime_python, runtime_env, use_orig_params=True, empty_init=True)
    assert "RuntimeError: The optimizer has references to the model's meta-device parameters" in stderr
    # without the meta device, joint setup passes Lightning's checks and fails only in torch's FSDP on CPU
    stderr = _joint_setup(tmp_path, runtime_python, runtime_env, use_orig_params=True, empty_init=False)
    assert "meta-device" not in stderr and "FSDP needs a non-CPU accelerator device" in stderr
