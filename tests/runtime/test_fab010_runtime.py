"""Runtime proof for FAB010 on CPU: a batch script that disagrees with the ``Fabric(...)`` it launches
makes real Lightning 2.6.6 raise the exact message the finding quotes; the script that agrees runs.

* torchrun: a real ``torch.distributed.run`` (``--standalone``) starts the script, as the batch
  script's ``torchrun`` line says.
* SLURM: there is no ``srun`` here, so the script runs with the variables ``srun`` gives a task —
  the ones fabric-lsp derives from the batch script (``engine.batch_scripts.environment``, the same
  function the rule reads) plus the per-task ones (``SLURM_PROCID``/``LOCALID``/``NODEID``, rank 0).
* ``fabric run``: ``lightning.fabric.cli.main`` (``fabric_run.py``), as the batch script's command says.

Each project is also checked with ``fabric-lsp check``: FAB010 on the invalid one (quoting the
message Lightning raised), nothing on the valid one.
"""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
from fabric_lsp.engine.program.batch_scripts import environment, parse

pytestmark = [pytest.mark.runtime, pytest.mark.timeout(1500)]

HERE = Path(__file__).resolve().parent
FABRIC_RUN = HERE / "fabric_run.py"
TORCHRUN = "import sys\nfrom torch.distributed.run import main\n\nsys.exit(main())\n"
SLURM_TASK = {
    "SLURM_PROCID": "0",
    "SLURM_LOCALID": "0",
    "SLURM_NODEID": "0",
    "SLURM_JOB_ID": "4321",
    "SLURM_NODELIST": "localhost",
    "MASTER_ADDR": "127.0.0.1",
}


def train(fabric_args: str, launch: bool = True) -> str:
    """A one-step training script; ``launch=False`` for ``fabric run``, which has created the
    processes already (``fabric.launch()`` raises there, ``fabric.py:990``)."""
    launch_line = "fabric.launch()" if launch else "pass  # fabric run started the processes"
    return f"""\
import torch
import lightning as L


def main():
    fabric = L.Fabric({fabric_args})
    {launch_line}
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    loss = model(torch.randn(2, 4)).sum()
    fabric.backward(loss)
    optimizer.step()
    print(f"RUNTIME-OK rank={{fabric.global_rank}}", flush=True)


if __name__ == "__main__":
    main()
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _project(tmp_path: Path, name: str, script_name: str, script: str, fabric_args: str, launch: bool = True) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / script_name).write_text(script)
    (folder / "train.py").write_text(train(fabric_args, launch))
    return folder


def _run(start_script, env: dict[str, str], folder: Path, script: str, *args: str):
    """``script`` in ``folder`` under the runtime harness (a run that hangs or aborts in torch's
    process-group teardown after its work is run once more; see ``conftest.Started``)."""
    return start_script(folder / script, *args, env=env).result()


def _findings(fabric_lsp, folder: Path) -> list[dict]:
    found = fabric_lsp("check", "--format", "json", "--select", "FAB010", str(folder), cwd=HERE.parent.parent)
    assert found.returncode in (0, 1) and "internal error" not in found.stderr, found.explain()
    return json.loads(found.stdout or "[]")


def _assert_reported(fabric_lsp, folder: Path, lightning_message: str) -> None:
    [finding] = _findings(fabric_lsp, folder)
    assert finding["code"] == "FAB010" and finding["severity"] == "error", finding
    assert lightning_message in finding["message"], finding["message"]


def _slurm_env(runtime_env: dict[str, str], folder: Path, script_name: str) -> dict[str, str]:
    script = parse((folder / script_name).read_text(), str(folder / script_name))
    assert script is not None
    [launch] = script.launches
    return {**runtime_env, **environment(script, launch).mapping(), **SLURM_TASK, "MASTER_PORT": str(_free_port())}


def test_torchrun_world_size(tmp_path, start_script, runtime_env, fabric_lsp):
    message = (
        "ValueError: You set `devices=2` and `num_nodes=1` in Lightning, but the product (2 * 1) does not"
        " match the world size (1)."
    )
    fabric_args = 'accelerator="cpu", devices=2, strategy="ddp"'
    for name, nproc in (("invalid", 1), ("valid", 2)):
        folder = _project(
            tmp_path, name, "run.sh", f"torchrun --standalone --nproc_per_node={nproc} train.py\n", fabric_args
        )
        (folder / "torchrun.py").write_text(TORCHRUN)
        res = _run(
            start_script, runtime_env, folder, "torchrun.py", "--standalone", f"--nproc_per_node={nproc}", "train.py"
        )
        if name == "invalid":
            assert res.returncode != 0 and message in res.stderr, res.explain()
            _assert_reported(fabric_lsp, folder, message.removeprefix("ValueError: "))
        else:
            assert res.returncode == 0 and "RUNTIME-OK rank=1" in res.stdout, res.explain()
            assert _findings(fabric_lsp, folder) == []


def test_slurm_ntasks_per_node(tmp_path, start_script, runtime_env, fabric_lsp):
    message = (
        "ValueError: You set `devices=2` in Lightning, but the number of tasks per node configured in SLURM"
        " `--ntasks-per-node=1` does not match. HINT: Set `devices=1`."
    )
    sbatch = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\nsrun python train.py\n"
    for name, devices in (("invalid", 2), ("valid", 1)):
        folder = _project(tmp_path, name, "job.sbatch", sbatch, f'accelerator="cpu", devices={devices}, strategy="ddp"')
        res = _run(start_script, _slurm_env(runtime_env, folder, "job.sbatch"), folder, "train.py")
        if name == "invalid":
            assert res.returncode != 0 and message in res.stderr, res.explain()
            _assert_reported(fabric_lsp, folder, message.removeprefix("ValueError: "))
        else:
            assert res.returncode == 0 and "RUNTIME-OK rank=0" in res.stdout, res.explain()
            assert _findings(fabric_lsp, folder) == []


def test_slurm_ntasks_without_ntasks_per_node(tmp_path, start_script, runtime_env, fabric_lsp):
    message = (
        "RuntimeError: You set `--ntasks=2` in your SLURM bash script, but this variable is not supported."
        " HINT: Use `--ntasks-per-node=2` instead."
    )
    fabric_args = 'accelerator="cpu", devices=2, strategy="ddp"'
    folder = _project(tmp_path, "invalid", "job.sbatch", "#SBATCH --ntasks=2\nsrun python train.py\n", fabric_args)
    res = _run(start_script, _slurm_env(runtime_env, folder, "job.sbatch"), folder, "train.py")
    assert res.returncode != 0 and message in res.stderr, res.explain()
    _assert_reported(fabric_lsp, folder, message.removeprefix("RuntimeError: "))


def test_fabric_run_devices_conflict(tmp_path, start_script, runtime_env, fabric_lsp):
    message = (
        "ValueError: Your code has `Fabric(devices=2, ...)` but it conflicts with the value `--devices=1`"
        " set through the CLI."
    )
    fabric_args = 'accelerator="cpu", devices=2, strategy="ddp"'
    for name, devices in (("invalid", "1"), ("valid", "2")):
        command = f"fabric run --accelerator=cpu --strategy=ddp --devices={devices} train.py\n"
        folder = _project(tmp_path, name, "run.sh", command, fabric_args, launch=False)
        shutil.copy(FABRIC_RUN, folder)
        res = _run(
            start_script, runtime_env, folder, FABRIC_RUN.name, "cpu", "ddp", devices, str(_free_port()), "train.py"
        )
        if name == "invalid":
            assert res.returncode != 0 and message in res.stderr, res.explain()
            _assert_reported(fabric_lsp, folder, message.removeprefix("ValueError: "))
        else:
            assert res.returncode == 0 and "RUNTIME-OK rank=1" in res.stdout, res.explain()
            assert _findings(fabric_lsp, folder) == []
