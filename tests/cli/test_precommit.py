"""The pre-commit hook (.pre-commit-hooks.yaml) run for real with `pre-commit try-repo`.

pre-commit installs this repository (at its committed HEAD) into a fresh virtualenv, exactly as
a user's `pre-commit install` would, so a runtime dependency missing from pyproject.toml fails
here. `try-repo` builds that environment afresh on every run (it uses a temporary store), so the
tests make two runs only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds a virtualenv through pre-commit

REPO = Path(os.environ.get("FABRIC_LSP_HOOK_REPO", Path(__file__).resolve().parents[2]))

DEEPSPEED = """\
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
model = torch.nn.Linear(4, 4)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
"""
CLEAN = """\
import torch
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
model = torch.nn.Linear(4, 4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model, optimizer = fabric.setup(model, optimizer)
"""


def _ensure_pre_commit() -> None:
    try:
        import pre_commit  # noqa: F401
    except ImportError:  # not in the test extra yet: install it rather than skip
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "pre-commit>=3.5,<5"], check=True, timeout=600)


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    if shutil.which("git") is None:
        pytest.fail("git is required for the pre-commit test")
    _ensure_pre_commit()
    return tmp_path_factory.mktemp("pre-commit-home")


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=str(cwd))
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


def sample_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "user.name", "test")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "sample")
    return root


def try_repo(sample: Path, home: Path) -> subprocess.CompletedProcess:
    ref = git(REPO, "rev-parse", "HEAD")
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never", NO_COLOR="1")
    env.pop("FABRIC_LSP_DEBUG", None)
    env.pop("PRE_COMMIT_ALLOW_NO_CONFIG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "fabric-lsp", "--all-files", "--ref", ref],
        cwd=sample,
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output and "ModuleNotFoundError" not in output, (
        "the hook crashed (a runtime dependency missing from pyproject.toml?):\n" + output
    )
    return proc


def test_hook_manifest_is_committed():
    manifest = (REPO / ".pre-commit-hooks.yaml").read_text()
    assert "id: fabric-lsp" in manifest and "entry: fabric-lsp check" in manifest
    assert "language: python" in manifest and "types_or: [python, pyi, jupyter]" in manifest
    assert git(REPO, "ls-files", ".pre-commit-hooks.yaml") == ".pre-commit-hooks.yaml"


def test_hook_fails_on_deepspeed_sample(tmp_path, pre_commit_home):
    notebook = (Path(__file__).resolve().parents[1] / "data" / "notebooks" / "fixable.ipynb").read_text(
        encoding="utf-8"
    )
    sample = sample_repo(
        tmp_path / "sample", {"train.py": DEEPSPEED, "README.md": "not python\n", "nb/train.ipynb": notebook}
    )
    proc = try_repo(sample, pre_commit_home)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert "fabric-lsp" in output and "Failed" in output
    assert "train.py:9:13: FAB001 [error]" in output
    assert "nb/train.ipynb:cell 5:5:13: FAB001 [error]" in output  # notebooks are checked too


def test_hook_passes_on_clean_sample_and_honours_pyproject_exclude(tmp_path, pre_commit_home):
    # (one run for both: every `try-repo` installs the hook's environment afresh)
    sample = sample_repo(
        tmp_path / "sample",
        {
            "train.py": CLEAN,
            "pkg/util.py": "x = 1\n",
            "pyproject.toml": '[tool.fabric-lsp]\nextend-exclude = ["legacy/"]\n',
            "legacy/old_train.py": DEEPSPEED,  # named by pre-commit, skipped thanks to --force-exclude
        },
    )
    proc = try_repo(sample, pre_commit_home)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "Passed" in output and "FAB001" not in output
