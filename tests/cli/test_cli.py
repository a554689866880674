"""CLI: exit codes, JSON schema, --fix / --diff, and clear one-line messages for bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "fabric_lsp", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_examples_json_and_exit_code():
    r = cli("check", "--format", "json", EXAMPLES, cwd=REPO)
    assert r.returncode == 1, r.stderr
    rows = json.loads(r.stdout)
    got = sorted((Path(x["filename"]).name, x["location"]["row"], x["severity"]) for x in rows)
    assert got == [("train_deepspeed.py", 12, "error"), ("train_tpu_flag.py", 14, "warning")]
    row = next(x for x in rows if x["severity"] == "error")
    assert row["code"] == "FAB001" and row["url"].endswith("FAB001.md")
    assert row["location"] == {"row": 12, "column": 13} and row["end_location"] == {"row": 12, "column": 47}
    assert row["fix"]["applicability"] == "safe" and row["fix"]["edits"]
    assert set(row) >= {"filename", "code", "message", "severity", "location", "end_location", "fix", "url"}


def test_text_format_and_clean_exit():
    r = cli("check", EXAMPLES / "train_deepspeed.py", cwd=REPO)
    assert r.returncode == 1
    assert "train_deepspeed.py:12:13: FAB001 [error]" in r.stdout
    assert "optimizer = fabric.setup_optimizers(optimizer)" in r.stdout
    clean = cli("check", EXAMPLES / "train_fsdp.py", cwd=REPO)
    assert clean.returncode == 0 and "All checks passed" in clean.stdout


def test_fix_in_place_and_diff(tmp_path):
    target = tmp_path / "train.py"
    shutil.copy(EXAMPLES / "train_deepspeed.py", target)
    original = target.read_text()
    diff = cli("check", "--diff", target, cwd=tmp_path)
    assert diff.returncode == 1 and "+model, optimizer = fabric.setup(model, optimizer)" in diff.stdout
    assert target.read_text() == original  # --diff changes nothing
    fixed = cli("check", "--fix", target, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "model, optimizer = fabric.setup(model, optimizer)" in target.read_text()
    again = cli("check", "--fix", target, cwd=tmp_path)
    assert again.returncode == 0 and "model, optimizer = fabric.setup" in target.read_text()
    assert not list(tmp_path.glob(".fabric-lsp-*"))  # no temporary files left behind


def test_bad_input_gets_one_clear_line(tmp_path):
    (tmp_path / "latin1.py").write_bytes(b"# caf\xe9\nfabric.setup_optimizers(x)\n")
    (tmp_path / "nul.py").write_bytes(b"x = 1\x00\n")
    (tmp_path / "empty.py").write_text("")
    r = cli("check", tmp_path, cwd=tmp_path)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert any("latin1.py: error: not valid UTF-8" in line for line in lines)
    assert any("nul.py: error: contains NUL bytes" in line for line in lines)
    assert not any("empty.py" in line for line in lines)  # found by walking the folder: checked quietly
    assert r.returncode == 0  # the empty file was checked and is clean
    named = cli("check", tmp_path / "empty.py", cwd=tmp_path)
    assert named.returncode == 0 and "empty.py: note: empty file, nothing to check" in named.stderr
    only_bad = cli("check", tmp_path / "latin1.py", cwd=tmp_path)
    assert only_bad.returncode == 2  # nothing could be checked
    missing = cli("check", tmp_path / "nope.py", cwd=tmp_path)
    assert missing.returncode == 2 and "nope.py: error: no such file or directory" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_nothing_to_check_says_so_and_is_no_error(tmp_path):
    """A folder with nothing fabric-lsp reads, or a named shell script that launches no Python,
    gets one warning line (as ruff's "No Python files found") and exit 0, not a silent exit 2."""
    (tmp_path / "setup.sh").write_text("pip install -e .\n")
    (tmp_path / "empty").mkdir()
    for target in (tmp_path / "setup.sh", tmp_path, tmp_path / "empty"):
        r = cli("check", target, cwd=tmp_path)
        assert r.returncode == 0, (target, r.stderr)
        assert "warning: nothing to check under the given path(s)" in r.stderr, (target, r.stderr)
    (tmp_path / "train.py").write_text("x = 1\n")
    r = cli("check", tmp_path, cwd=tmp_path)
    assert r.returncode == 0 and "nothing to check" not in r.stderr


def test_folder_of_empty_init_files_is_quiet(tmp_path):
    for pkg in ("a", "a/b", "c"):
        (tmp_path / pkg).mkdir(parents=True)
        (tmp_path / pkg / "__init__.py").write_text("")
    r = cli("check", ".", cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "All checks passed (3 files)" in r.stdout


def test_rules_lists_every_rule_with_its_fix_availability():
    from fabric_lsp.rules import ALL_RULES

    r = cli("rules")
    assert r.returncode == 0
    header, *rows = r.stdout.splitlines()
    assert header.split()[:3] == ["code", "fix", "name"]
    assert len(rows) == len(ALL_RULES)
    for rule, row in zip(ALL_RULES, rows):
        code, fix, name, *_ = row.split()
        assert (code, fix, name) == (rule.code, "yes" if rule.fixable else "no", rule.name)
        assert row.endswith(rule.summary)


def test_usage_errors_exit_2():
    assert cli("check", "--format", "yaml", ".").returncode == 2
    assert cli("rule", "FAB999").returncode == 2
    r = cli("rule", "FAB001")
    assert r.returncode == 0 and "## Fix safety" in r.stdout


def test_cross_file_inference_from_the_common_root(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "factory.py").write_text(
        "from lightning.fabric import Fabric\n\ndef make():\n    return Fabric(strategy='deepspeed')\n"
    )
    (tmp_path / "pkg" / "train.py").write_text(
        "from pkg.factory import make\nfabric = make()\nfabric.launch()\nm = fabric.setup(m)\no = fabric.setup_optimizers(o)\n"
    )
    r = cli("check", "--format", "json", tmp_path / "pkg", cwd=REPO)
    rows = json.loads(r.stdout)
    assert [(Path(x["filename"]).name, x["location"]["row"], x["severity"]) for x in rows] == [("train.py", 5, "error")]


def test_batch_scripts_are_checked_and_not_repeated(tmp_path):
    """FAB010: a folder walk reports the mismatch once, in the Python file (the script's lines as
    related information); a batch script checked alone reports it on its own line; a shell
    script that launches nothing through SLURM/torchrun/fabric run is not counted as checked."""
    (tmp_path / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\nsrun python train.py\n"
    )
    (tmp_path / "train.py").write_text(
        'from lightning.fabric import Fabric\nfabric = Fabric(accelerator="cuda", devices=8, num_nodes=2)\nfabric.launch()\n'
    )
    (tmp_path / "clean.sh").write_text("#!/bin/bash\necho hello\n")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    r = cli("check", "--format", "json", tmp_path, cwd=REPO)
    rows = json.loads(r.stdout)
    assert [(Path(x["filename"]).name, x["code"], x["location"]["row"]) for x in rows] == [("train.py", "FAB010", 2)], (
        r.stderr
    )
    assert {Path(x["filename"]).name for x in rows[0]["related"]} == {"job.sbatch"}
    alone = cli("check", "--format", "json", tmp_path / "job.sbatch", tmp_path / "clean.sh", cwd=REPO)
    [row] = json.loads(alone.stdout)
    assert (Path(row["filename"]).name, row["location"]["row"], row["severity"]) == ("job.sbatch", 3, "error")
    assert Path(row["related"][0]["filename"]).name == "train.py"
    assert "in 1 file" in cli("check", tmp_path / "job.sbatch", tmp_path / "clean.sh", cwd=REPO).stdout


#: what a check imports only when some file needs an analysis
_ANALYSIS_MODULES = (
    "jedi",
    "pygls",
    "fabric_lsp.engine.analyzer",
    "fabric_lsp.rules.fab001",
    "fabric_lsp.engine.workspace.workspace",
)


def _imported_by(code: str, cwd) -> set[str]:
    probe = f"import sys\nfrom fabric_lsp.cli.main import main\n{code}\nprint(' '.join(sorted(sys.modules)))\n"
    import os

    import fabric_lsp

    env = {
        **os.environ,
        "PYTHONPATH": str(Path(fabric_lsp.__file__).resolve().parents[1]),
    }  # this checkout's, from any folder
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    return set(r.stdout.splitlines()[-1].split())  # the last line (the help's text comes before)


def test_help_and_a_project_no_rule_looks_at_import_no_analysis(tmp_path):
    """``--help``, ``--version``, and a check of modules no rule's prefilter lets through (plain
    numpy scripts, an empty file), cached or not, import neither the engine's analysis, the rules'
    checks, jedi nor pygls: they cost little more than Python's start-up."""
    (tmp_path / "stats.py").write_text("import numpy as np\n\nprint(np.arange(10).mean())\n")
    (tmp_path / "empty.py").write_text("")
    runs = [
        "main(['--version'])",
        "main(['check', '--help'])",
        "assert main(['check', '.', '--no-cache']) == 0",
        "assert main(['check', '.']) == 0",
        "assert main(['check', '.']) == 0",  # from the cache
    ]
    for code in runs:
        modules = _imported_by(f"try:\n    {code}\nexcept SystemExit:\n    pass", tmp_path)
        assert not [m for m in _ANALYSIS_MODULES if m in modules], code
    # and the same project with one file a rule looks at is analysed as before: in this process
    # with one job, else in the process forked before the walk (which this one never imports)
    (tmp_path / "train.py").write_text(
        "from lightning.fabric import Fabric\n\nfabric = Fabric(strategy='deepspeed')\n"
        "model = fabric.setup_module(model)\noptimizer = fabric.setup_optimizers(optimizer)\n"
    )
    one = "assert main(['check', '.', '--no-cache', '--jobs', '1']) == 1"  # FAB001's error found
    assert "fabric_lsp.engine.analyzer" in _imported_by(one, tmp_path)
    two = "assert main(['check', '.', '--no-cache', '--jobs', '2']) == 1"
    assert not [m for m in _ANALYSIS_MODULES if m in _imported_by(two, tmp_path)]


def test_a_run_from_the_cache_imports_not_even_the_rules_words(tmp_path):
    """Every file held by the cache: the prefilters (the rules' words, compiled at import) are not
    imported; the first run needed them."""
    (tmp_path / "train.py").write_text("from lightning.fabric import Fabric\nfabric = Fabric()\n")
    (tmp_path / "stats.py").write_text("print(1)\n")
    run = "try:\n    main(['check', '.'])\nexcept SystemExit:\n    pass"
    assert "fabric_lsp.rules.prefilters" in _imported_by(run, tmp_path)
    assert "fabric_lsp.rules.prefilters" not in _imported_by(run, tmp_path)


def test_fabric_lsp_leaves_without_tearing_its_heap_down_and_loses_no_output(tmp_path):
    """``fabric-lsp`` exits as soon as its output is flushed (``cli.main.run``): nothing
    registered to run at exit runs (its heap is not torn down either), the exit status and every
    byte of a long output are there."""
    for i in range(40):
        shutil.copy(EXAMPLES / "train_deepspeed.py", tmp_path / f"train_{i:02}.py")
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('at exit', file=sys.stderr))\n"
        "from fabric_lsp.cli.main import run\n"
        "sys.argv = ['fabric-lsp', *sys.argv[1:]]\n"
        "run()\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", probe, "check", "--format", "json", "."],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert r.returncode == 1, r.stderr
    assert len(json.loads(r.stdout)) == 40 and "at exit" not in r.stderr
    rules = subprocess.run([sys.executable, "-c", probe, "rules"], capture_output=True, text=True, timeout=120)
    assert rules.returncode == 0 and "FAB001" in rules.stdout and "at exit" not in rules.stderr
