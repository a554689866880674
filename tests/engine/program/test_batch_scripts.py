"""engine/program/batch_scripts.py (parsing batch-job scripts, the environment a launch sets, which file
it launches) and FAB010's verdicts on top of it."""

from __future__ import annotations

import pytest
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.program import batch_scripts
from fabric_lsp.engine.program.batch_scripts import environment, parse, targets
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE
from hypothesis import given, settings
from hypothesis import strategies as st


def _launch(text: str):
    script = parse(text, "/w/job.sh")
    assert script is not None
    [launch] = script.launches
    return script, launch


# -- parsing ------------------------------------------------------------------------------------
def test_sbatch_options_stop_at_the_first_command():
    script = parse("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node 4\nmodule load x\n#SBATCH --nodes=8\n", "/w/j")
    assert script is not None and script.slurm
    assert [(o.name, o.value) for o in script.sbatch] == [("nodes", "2"), ("ntasks_per_node", "4")]
    assert script.sbatch_option("nodes").line == 1


def test_srun_options_and_environment_assignments():
    script, launch = _launch(
        "#SBATCH --nodes=2\nexport X=1\nOMP_NUM_THREADS=4 srun --ntasks-per-node=2 -l python3 -u train.py --lr 1\n"
    )
    assert (launch.runner, launch.srun, launch.target, launch.module) == ("python", True, "train.py", False)
    assert script.slurm_option(launch, "ntasks_per_node").value == "2"
    env = environment(script, launch).mapping()
    assert env == {"SLURM_NTASKS": "4", "SLURM_NTASKS_PER_NODE": "2", "SLURM_NNODES": "2"}


def test_an_executable_script_run_directly():
    _, launch = _launch("#SBATCH --nodes=2\nsrun ./script.py --epochs 1\n")
    assert (launch.runner, launch.target, launch.srun) == ("python", "./script.py", True)


def test_continuation_lines_and_modules():
    _, launch = _launch("#SBATCH -n 8\nsrun \\\n  python -m pkg.train \\\n  --epochs 3\n")
    assert (launch.line, launch.target, launch.module) == (1, "pkg.train", True)


@pytest.mark.parametrize(
    "command, world",
    [
        ("torchrun --nproc_per_node=4 --nnodes=2 train.py", "8"),
        ("torchrun --nproc-per-node 4 --standalone train.py", "4"),
        ("python -m torch.distributed.run --nproc_per_node=2 train.py", "2"),
        ("torchrun train.py", "1"),
        ("torchrun --nproc_per_node=gpu train.py", None),
        ("torchrun --nproc_per_node=4 --nnodes=1:4 train.py", None),
    ],
)
def test_torchrun_world_size(command, world):
    script, launch = _launch(f"#!/bin/bash\n{command}\n")
    assert launch.runner == "torchrun" and launch.target == "train.py"
    assert environment(script, launch).mapping().get("WORLD_SIZE") == world


def test_fabric_run_sets_the_cli_variables():
    script, launch = _launch("fabric run --devices=4 --num-nodes 2 --strategy ddp src/train.py --lr 1\n")
    env = environment(script, launch).mapping()
    assert (launch.runner, launch.target) == ("fabric run", "src/train.py")
    assert env["LT_CLI_USED"] == "1" and env["LT_DEVICES"] == "4" and env["LT_NUM_NODES"] == "2"
    assert env["WORLD_SIZE"] == "8"


def test_a_multi_line_lightning_run_model_command():
    script, launch = _launch(
        "#!/bin/bash\nlightning run model \\\n    --accelerator=cuda \\\n    --devices=4 \\\n    train.py\n"
    )
    env = environment(script, launch).mapping()
    assert (launch.line, launch.runner, launch.target) == (1, "fabric run", "train.py")
    assert env["LT_DEVICES"] == "4" and env["LT_ACCELERATOR"] == "cuda"


def test_plain_shell_scripts_are_ignored():
    assert parse("#!/bin/bash\npython train.py\n", "/w/run.sh") is None
    assert parse("#!/bin/bash\naccelerate launch train.py\n", "/w/run.sh") is None


_WORDS = st.sampled_from(
    [
        "python",
        "python3.10",
        'p"y"thon',
        "'torch'run",
        "torchrun",
        "fab\\ric",
        "fabric",
        "lightning",
        "run",
        "model",
        "-m",
        "torch.distributed.run",
        "train.py",
        "tr'ain'.py",
        "srun",
        "-N",
        "2",
        "cd",
        "c'd'",
        "pushd",
        "sub",
        "$DIR",
        "&&",
        ";",
        "|",
        "#SBATCH",
        "--nodes=2",
        "--nproc-per-node=4",
        "echo",
        "env",
        "A=1",
        "exec",
        "\\",
        '"',
        "'",
        "#",
        "py",
    ]  # fmt: skip
)
_SCRIPTS = st.lists(st.lists(_WORDS, max_size=8).map(" ".join), max_size=8).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(_SCRIPTS)
def test_what_the_word_gates_skip_parses_to_nothing(text):
    """The text gates (a script or command without a launcher's words is not split) change no
    parse: the same script parsed with every gate open gives the same answer."""
    gated = parse(text, "/w/job.sh")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(batch_scripts, "_holds_any", lambda text, words: True)
        assert gated == parse(text, "/w/job.sh")


def test_no_tasks_requested_without_srun_sets_no_slurm_ntasks():
    script, launch = _launch("#SBATCH --gres=gpu:4\npython train.py\n")
    assert environment(script, launch).mapping() == {}


def test_cd_before_the_launch(tmp_path):
    (tmp_path / "src").mkdir()
    train = tmp_path / "src" / "train.py"
    train.write_text("")
    script = parse("#SBATCH -N 1\ncd src\nsrun python train.py\n", str(tmp_path / "job.sbatch"))
    assert script is not None and script.launches[0].directory == "src"
    assert targets(script, script.launches[0], str(train), str(tmp_path))
    unknown = parse("#SBATCH -N 1\ncd $WORK\nsrun python train.py\n", str(tmp_path / "job.sbatch"))
    assert unknown is not None and not targets(unknown, unknown.launches[0], str(train), str(tmp_path))


def test_targets(tmp_path):
    (tmp_path / "src").mkdir()
    train = tmp_path / "src" / "train.py"
    train.write_text("")
    (tmp_path / "jobs").mkdir()
    for command, expected in [
        ("srun python src/train.py", True),
        ("srun python $HOME/project/src/train.py", True),
        ("srun python -m src.train", True),
        ("srun python other/train.py", False),  # another folder
        ("srun python eval.py", False),
    ]:
        script = parse(f"#SBATCH -N 1\n{command}\n", str(tmp_path / "jobs" / "job.sbatch"))
        assert script is not None
        assert targets(script, script.launches[0], str(train), str(tmp_path)) is expected, command


# -- FAB010 -------------------------------------------------------------------------------------
SBATCH = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\nsrun python train.py\n"


def _fab010(tmp_path, code: str, script: str = SBATCH, name: str = "job.sbatch"):
    batch_scripts.forget()
    (tmp_path / name).write_text(script)
    path = tmp_path / "train.py"
    path.write_text(code)
    return Analyzer(Workspace(str(tmp_path)), [RULES_BY_CODE["FAB010"]]).analyze(code, str(path))


FABRIC = "from lightning.fabric import Fabric\n"


@pytest.mark.parametrize(
    "arguments",
    [
        'accelerator="cuda", devices=4, num_nodes=2',  # agrees
        'accelerator="cuda", strategy="fsdp", devices=8, num_nodes=2',  # FSDP has no launcher under SLURM
        'accelerator="cuda", strategy="ddp_spawn", devices=8, num_nodes=2',  # its launcher does not validate
        'accelerator="cuda", devices="auto", num_nodes=2',  # the node's device count is not in the code
        'accelerator="cuda", devices=1',  # one device: no launcher, nothing validated
    ],
)
def test_no_finding_where_lightning_does_not_check(tmp_path, arguments):
    assert _fab010(tmp_path, f"{FABRIC}fabric = Fabric({arguments})\nfabric.launch()\n") == []


def test_interactive_job_name_is_not_slurm_for_lightning(tmp_path):
    script = SBATCH.replace("#SBATCH --nodes=2\n", "#SBATCH --nodes=2\n#SBATCH --job-name=interactive\n")
    assert _fab010(tmp_path, f"{FABRIC}fabric = Fabric(devices=8, num_nodes=2)\n", script) == []


def test_a_branch_that_can_disagree_is_a_warning(tmp_path):
    code = f'{FABRIC}import sys\nn = 4 if sys.argv[1:] else 8\nfabric = Fabric(accelerator="cuda", devices=n, num_nodes=2)\n'
    [finding] = _fab010(tmp_path, code)
    assert finding.severity.value == "warning"
    assert "for a configuration this code can choose" in finding.message


def test_single_node_job_without_srun_is_launched_by_lightning(tmp_path):
    script = "#!/bin/bash\n#SBATCH --gres=gpu:4\npython train.py\n"
    assert _fab010(tmp_path, f'{FABRIC}fabric = Fabric(accelerator="cuda", devices=4)\n', script) == []


def test_multi_node_job_without_srun_hangs(tmp_path):
    script = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:4\npython train.py\n"
    [finding] = _fab010(tmp_path, f'{FABRIC}fabric = Fabric(accelerator="cuda", devices=4, num_nodes=2)\n', script)
    assert finding.severity.value == "warning" and "only the first node runs the script" in finding.message


def test_related_information_points_at_the_script_lines(tmp_path):
    [finding] = _fab010(tmp_path, f'{FABRIC}fabric = Fabric(accelerator="cuda", devices=8, num_nodes=2)\n')
    assert [(r.path, r.span.start.line) for r in finding.related] == [
        (str(tmp_path / "job.sbatch"), 2),
        (str(tmp_path / "job.sbatch"), 3),
    ]
    assert finding.span.start.line == 1 and finding.fix is None


def test_without_a_workspace_nothing_is_read(tmp_path):
    code = f'{FABRIC}fabric = Fabric(accelerator="cuda", devices=8, num_nodes=2)\n'
    assert Analyzer(Workspace(), [RULES_BY_CODE["FAB010"]]).analyze(code, str(tmp_path / "train.py")) == []
