"""Proof by running Lightning: fabric-lsp's FAB001 fix turns a crashing script into one that trains.

Each script in ``cases/`` sets up model and optimizer separately under a DeepSpeed strategy that
runs on CPU (a test-only ``CPUDeepSpeedStrategy`` subclass defined in the script). For each one:

1. the ORIGINAL, run with real torch + lightning + deepspeed (``.venv-runtime``), must crash with
   Lightning's "requires the model and optimizer(s) to be set up jointly" RuntimeError (ZeRO 3), or
   with DeepSpeed's own "zero stage N requires an optimizer" assertion (ZeRO 1-2, raised earlier,
   at the model-only setup);
2. ``fabric-lsp check --format json`` must report FAB001 on it;
3. ``fabric-lsp check --fix`` rewrites it, after which ``check`` reports no FAB001;
4. the FIXED script must exit 0 after a forward/backward/step and print ``RUNTIME-OK``.

A case the fixer refuses (listed in REFUSED with the reason) must instead be left byte-for-byte
unchanged with the finding still reported.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.runtime, pytest.mark.timeout(1500)]  # the first test may install the venv

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"
CONTROLS_DIR = HERE / "controls"

JOINT_MESSAGE = "requires the model and optimizer(s) to be set up jointly through `.setup(model, optimizer, ...)`"
LIGHTNING_ERROR = f"RuntimeError: The `CPUDeepSpeedStrategy` {JOINT_MESSAGE}"

# case file -> the error its original must die with (default: Lightning's RuntimeError)
EXPECTED_ERROR = {
    "zero_stage1.py": "AssertionError: zero stage 1 requires an optimizer",
    "zero_stage2.py": "AssertionError: zero stage 2 requires an optimizer",
}

CASES = [
    "classic_setup_module.py",  # setup_module; optimizer from model.parameters(); setup_optimizers
    "setup_then_setup_optimizers.py",  # model = fabric.setup(model); setup_optimizers (L.Fabric)
    "setup_module_kwargs.py",  # setup_module(model, move_to_device=True)
    "attribute_targets.py",  # self.model / self.optimizer inside a class method
    "renamed_targets.py",  # ds_model / ds_opt, optimizer built from the raw model first
    "inline_optimizer.py",  # setup_optimizers(torch.optim.SGD(model.parameters(), ...))
    "launch_main_function.py",  # def main(fabric) ... fabric.launch(main)
    "zero_stage2.py",
    "zero_stage1.py",
    "crlf_line_endings.py",
    "tab_indentation.py",
    "scheduler_between.py",  # an LR scheduler built on the optimizer between the calls
    "parameter_list_between.py",  # params = [p for p in model.parameters() ...] between the calls
    "standalone_lightning_fabric.py",  # from lightning_fabric import Fabric (standalone package)
    "fabric_subclass.py",  # class MyFabric(Fabric)
    "forward_between.py",  # the set-up model is used (forward) between the calls
    "two_optimizers.py",  # setup_optimizers(opt_a, opt_b): DeepSpeed takes one optimizer
    "discarded_optimizer.py",  # fabric.setup_optimizers(optimizer) result thrown away
    "two_models_gan.py",  # gen + disc, two setup_module then two setup_optimizers
]

# case file -> why `check --fix` legitimately leaves it unchanged (the finding then remains)
REFUSED: dict[str, str] = {
    "forward_between.py": "the set-up model is used between the two calls; moving that use is the author's call",
    "two_optimizers.py": "DeepSpeed's joint setup takes exactly one optimizer",
    "discarded_optimizer.py": "only an unsafe fix is offered (see test_unsafe_fix_of_discarded_optimizer_trains)",
}

# case file -> known fixer bug: the case is expected to fail until the fixer is corrected (strict)
KNOWN_BROKEN: dict[str, str] = {}


def test_case_list_matches_folder():
    """Every fixture script is exercised, and every listed one exists."""
    assert sorted(p.name for p in CASES_DIR.glob("*.py")) == sorted(CASES)
    assert set(REFUSED) <= set(CASES)
    assert set(KNOWN_BROKEN) <= set(CASES)
    assert not set(REFUSED) & set(KNOWN_BROKEN)


def _fab001(fabric_lsp, script: Path) -> list[dict]:
    res = fabric_lsp("check", "--format", "json", script.name, cwd=script.parent)
    assert res.returncode in (0, 1), f"fabric-lsp check failed:\n{res.explain()}"
    assert "internal error" not in res.stderr, res.explain()
    try:
        findings = json.loads(res.stdout)
    except ValueError:
        pytest.fail(f"fabric-lsp check --format json printed no JSON:\n{res.explain()}")
    return [f for f in findings if f.get("code") == "FAB001"]


def _assert_style_kept(case: str, before: bytes, after: bytes) -> None:
    if case == "crlf_line_endings.py":
        assert before.count(b"\n") == before.count(b"\r\n")  # the fixture really is CRLF
        assert after.count(b"\n") == after.count(b"\r\n"), "the fix introduced bare LF line endings"
    if case == "tab_indentation.py":
        assert re.search(rb"^\t+\S", before, re.M)
        spaced = [ln for ln in after.splitlines() if re.match(rb"^ +\S", ln)]
        assert not spaced, f"the fix indented with spaces in a tab-indented file: {spaced}"


def _case_params():
    for case in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_BROKEN[case])] if case in KNOWN_BROKEN else []
        yield pytest.param(case, id=case.removesuffix(".py"), marks=marks)


@pytest.mark.runtime
@pytest.mark.parametrize("case", list(_case_params()))
def test_fix_turns_crash_into_training(case, tmp_path, start_script, run_script, fabric_lsp):
    (tmp_path / "original").mkdir()
    (tmp_path / "fixed").mkdir()
    original_script = tmp_path / "original" / case
    script = tmp_path / "fixed" / case
    for dest in (original_script, script):
        shutil.copyfile(CASES_DIR / case, dest)  # byte copy: CRLF and tabs stay as committed
    original = script.read_bytes()

    # 1. The original must crash; it runs in the background while the copy is fixed (checked below).
    started = start_script(original_script)

    # 2. fabric-lsp sees it.
    assert _fab001(fabric_lsp, script), "fabric-lsp reports no FAB001 on the separated-setup script"

    # 3. The fixer rewrites it (or refuses, leaving it untouched).
    fix = fabric_lsp("check", "--fix", script.name, cwd=script.parent)
    assert fix.returncode in (0, 1), f"fabric-lsp check --fix failed:\n{fix.explain()}"
    assert "internal error" not in fix.stderr, fix.explain()
    fixed = script.read_bytes()
    remaining = _fab001(fabric_lsp, script)

    # 1'. ... with the error Lightning (or DeepSpeed, at ZeRO 1-2) raises.
    before = started.result()
    expected = EXPECTED_ERROR.get(case, LIGHTNING_ERROR)
    assert before.returncode != 0, f"the separated-setup original did not fail:\n{before.explain()}"
    assert expected in before.stderr, f"expected {expected!r} in stderr:\n{before.explain()}"
    assert "RUNTIME-OK" not in before.stdout

    if case in REFUSED:
        assert fixed == original, f"REFUSED case was changed by --fix:\n{fixed.decode()}"
        assert remaining, "REFUSED case: the finding should remain after --fix"
        return

    assert fixed != original, f"--fix left the file unchanged:\n{fix.explain()}"
    assert not remaining, f"FAB001 remains after --fix: {remaining}\n{fixed.decode()}"
    _assert_style_kept(case, original, fixed)

    # 4. The fixed script trains: forward, backward, optimizer step (the script asserts the loss fell).
    after = run_script(script)
    assert after.returncode == 0, f"the FIXED script failed:\n{after.explain()}\n--- fixed script ---\n{fixed.decode()}"
    assert "RUNTIME-OK" in after.stdout.splitlines(), after.explain()


@pytest.mark.runtime
def test_harness_runs_a_joint_setup_script(tmp_path, run_script, fabric_lsp):
    """Control: a hand-written joint setup trains with the same venv/environment, and is not flagged."""
    script = tmp_path / "joint_setup.py"
    shutil.copyfile(CONTROLS_DIR / "joint_setup.py", script)
    res = run_script(script)
    assert res.returncode == 0, res.explain()
    assert "RUNTIME-OK" in res.stdout.splitlines(), res.explain()
    assert not _fab001(fabric_lsp, script)


@pytest.mark.runtime
def test_unsafe_fix_of_discarded_optimizer_trains(tmp_path, run_script, fabric_lsp):
    """`--fix --unsafe-fixes` on a discarded setup_optimizers result gives a script that trains.

    Regression guard: the first version of this fix wrote `model, _ = fabric.setup(model, optimizer)`;
    the script kept stepping the raw optimizer, which under DeepSpeed ZeRO-3 ran without error but
    updated nothing (the loss stayed the same). The fixed script asserts that its loss falls.
    """
    script = tmp_path / "discarded_optimizer.py"
    shutil.copyfile(CASES_DIR / "discarded_optimizer.py", script)
    original = script.read_bytes()
    fix = fabric_lsp("check", "--fix", "--unsafe-fixes", script.name, cwd=tmp_path)
    assert fix.returncode in (0, 1) and "internal error" not in fix.stderr, fix.explain()
    assert script.read_bytes() != original, "--unsafe-fixes left the file unchanged"
    assert not _fab001(fabric_lsp, script)
    res = run_script(script)
    assert res.returncode == 0, f"{res.explain()}\n--- fixed script ---\n{script.read_text()}"
    assert "RUNTIME-OK" in res.stdout.splitlines(), res.explain()
