"""FAB010's documentation and its VALID/INVALID examples (the test-suite runs them, each in a
workspace with the batch script that launches it)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = "Batch-job script (SLURM, torchrun, `fabric run`) that disagrees with the `Fabric(...)` it launches"

DOC = """
## What it does
Reads the workspace's batch-job scripts (`*.sh`, `*.sbatch`, `*.slurm` with `#SBATCH` lines, a
`torchrun` or a `fabric run` command), finds the Python script each one launches
(`python train.py`, `srun python -m pkg.train`, `torchrun --nproc_per_node=4 train.py`,
`python -m torch.distributed.run ...`, `fabric run --devices=4 train.py`) and compares what the
script gives the job with the `Fabric(...)` of that Python file, as Lightning 2.6.6 does on the cluster:

- `#SBATCH --ntasks-per-node=m` (or `srun --ntasks-per-node`) against `devices=n`, and
  `#SBATCH --nodes=k` against `num_nodes=` (`SLURMEnvironment.validate_settings`);
- `#SBATCH --ntasks=n` (n > 1) without `--ntasks-per-node`: `SLURMEnvironment` rejects it when
  `Fabric(...)` is constructed;
- `torchrun --nproc_per_node=m --nnodes=k` against `devices × num_nodes`
  (`TorchElasticEnvironment.validate_settings`);
- `fabric run --devices=m --num-nodes=k` against a `Fabric(devices=, num_nodes=)` that sets another
  value (the connector's check of `LT_*` against the code);
- a SLURM script that starts `python` without `srun` while the job asks for several tasks or nodes
  (a **warning**: nothing raises, the job hangs).

The launched file is looked up from the script's folder and the workspace root (after a `cd` in
the script, from that folder first); a path under a variable or an absolute path
(`$HOME/project/src/train.py`) is matched by its trailing folders and file name. `#SBATCH` lines are
read up to the first command, as SLURM does; options on the `srun` line override them.

The finding sits on the `Fabric(...)` argument (`devices`, `num_nodes`), with the script's lines as
related information. `fabric-lsp check` also checks the batch scripts themselves, and the language
server analyses an open one: there the finding sits on the script's line, with the Python side as
related information.

It is an **error** when every configuration the code can choose fails under the script, a
**warning** when one it visibly can choose does (a branch, a default). Only literal `devices` and
`num_nodes` are compared: a value from the command line or a config file may be what the script
passes, and `devices="auto"`/`-1` depends on the node. Options the script does not state (no
`--nodes`, `--nproc_per_node=gpu`, a shell variable) are not guessed.

## Why is this bad?
The mismatch shows only on the cluster: after the job waited in the queue, the nodes were
allocated and the environment set up, every process raises at `fabric.launch()` (or when
`Fabric(...)` is constructed). Without `srun`, SLURM starts one process where the job asked for
several, and that process waits for ranks that never come until the job's time limit — Lightning's
own docstring calls it "a frequent user error" (`plugins/environments/slurm.py:193`).

## Lightning's message
From the Lightning 2.6.6 source:

    ValueError: You set `devices=8` in Lightning, but the number of tasks per node configured in
    SLURM `--ntasks-per-node=4` does not match. HINT: Set `devices=4`.
                                                 (lightning/fabric/plugins/environments/slurm.py:163)

    ValueError: You set `num_nodes=1` in Lightning, but the number of nodes configured in SLURM
    `--nodes=2` does not match. HINT: Set `num_nodes=2`.   (lightning/fabric/plugins/environments/slurm.py:169)

    RuntimeError: You set `--ntasks=8` in your SLURM bash script, but this variable is not supported.
    HINT: Use `--ntasks-per-node=8` instead.              (lightning/fabric/plugins/environments/slurm.py:221)

    ValueError: You set `devices=2` and `num_nodes=1` in Lightning, but the product (2 * 1) does not
    match the world size (4).                      (lightning/fabric/plugins/environments/torchelastic.py:90)

    ValueError: Your code has `Fabric(devices=2, ...)` but it conflicts with the value `--devices=4`
    set through the CLI.  Remove it either from the CLI or from the Lightning Fabric object.
                                                                   (lightning/fabric/connector.py:549)

    PossibleUserWarning: The `srun` command is available on your system but is not used. HINT: If your
    intention is to run Lightning on SLURM, prepend your python command with `srun` like so: ...
                                                 (lightning/fabric/plugins/environments/slurm.py:204)

The `validate_settings` checks run in `_SubprocessScriptLauncher.launch`
(`strategies/launchers/subprocess_script.py:102`), i.e. at `fabric.launch()`.

## Example
```bash
#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
srun python train.py
```
```python
# train.py
fabric = Fabric(accelerator="cuda", devices=8, num_nodes=2)
fabric.launch()
```

## Use instead
```python
fabric = Fabric(accelerator="cuda", devices=4, num_nodes=2)  # one process per SLURM task
```

## Fix safety
No fix: the script and the code disagree, and which one is right (how many GPUs a node has, how
many nodes the job should take) is the author's choice. The message names both sides.

## Which strategies
The `validate_settings` checks run only where Lightning's subprocess-script launcher runs under a
cluster: DDP (`strategy="ddp"`, the default for several devices) and DeepSpeed. FSDP and
`ModelParallelStrategy` create no launcher when SLURM or torchrun starts the processes
(`strategies/fsdp.py:249`, `strategies/model_parallel.py:160`), so Lightning checks nothing there and
neither does this rule; `ddp_spawn`/`ddp_fork` use another launcher that does not check either. The
`--ntasks` check and the `fabric run` conflict apply to every strategy; a single-device
configuration never hangs. A job named `bash` or `interactive` (`#SBATCH --job-name`) is not
treated as SLURM by Lightning and is not judged.
"""

_TRAIN_8 = """
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=8, num_nodes=2)
fabric.launch()
"""

_TRAIN_4 = """
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=4, num_nodes=2)
fabric.launch()
"""

_SBATCH_4x2 = """
#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:4

srun python train.py
"""

VALID = [
    Example(
        "the Fabric asks for what the SLURM job requests",
        _TRAIN_4,
        files=(("job.sbatch", _SBATCH_4x2),),
    ),
    Example(
        "torchrun starts as many processes as the Fabric expects",
        """
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=4)
fabric.launch()
""",
        files=(("run.sh", "#!/bin/bash\ntorchrun --standalone --nproc_per_node=4 train.py --lr 3e-4\n"),),
    ),
    Example(
        "devices from the command line, which the script may set",
        """
import argparse
from lightning.fabric import Fabric

parser = argparse.ArgumentParser()
parser.add_argument("--devices", type=int, default=8)
args = parser.parse_args()
fabric = Fabric(accelerator="cuda", devices=args.devices, num_nodes=2)
fabric.launch()
""",
        files=(("job.sbatch", _SBATCH_4x2.replace("train.py", "train.py --devices 4")),),
    ),
    Example(
        "a shell script without #SBATCH or torchrun is not a batch job",
        _TRAIN_8,
        files=(("run.sh", "#!/bin/bash\npython train.py\n"),),
    ),
    Example(
        "the batch script launches another file",
        _TRAIN_8,
        files=(("job.sbatch", _SBATCH_4x2.replace("train.py", "finetune.py")), ("finetune.py", "print()\n")),
    ),
]

INVALID = [
    Example(
        "devices differs from #SBATCH --ntasks-per-node",
        _TRAIN_8,
        severity=Severity.ERROR,
        files=(("job.sbatch", _SBATCH_4x2),),
    ),
    Example(
        "num_nodes differs from #SBATCH --nodes",
        """
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=4)
fabric.launch()
""",
        severity=Severity.ERROR,
        files=(("job.sbatch", _SBATCH_4x2),),
    ),
    Example(
        "--ntasks without --ntasks-per-node",
        _TRAIN_4,
        severity=Severity.ERROR,
        files=(("job.slurm", "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks=8\nsrun python train.py\n"),),
    ),
    Example(
        "torchrun starts fewer processes than the Fabric expects",
        """
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=8)
fabric.launch()
""",
        severity=Severity.ERROR,
        files=(("scripts/run.sh", "#!/bin/bash\ntorchrun --nproc_per_node 4 train.py\n"),),
    ),
    Example(
        "fabric run --devices conflicts with the code",
        """
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=2)
""",
        severity=Severity.ERROR,
        files=(("run.sh", "#!/bin/bash\nfabric run --accelerator=cuda --devices=4 train.py\n"),),
    ),
    Example(
        "a SLURM job with 4 tasks that starts python without srun",
        _TRAIN_4,
        severity=Severity.WARNING,
        files=(("job.sbatch", _SBATCH_4x2.replace("srun python", "python")),),
    ),
]
