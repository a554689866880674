"""Runtime proof for FAB002, FAB003, FAB004, FAB005, FAB006, FAB007 and FAB009: each INVALID example fails with the error
Lightning 2.6.6 raises, and its fixed / VALID form runs.

Layout: ``rules/FAB00N/<case>.py`` is the INVALID script; ``<case>.fixed.py`` is what the rule's
automatic fix must turn it into (only where the rule offers a fix); ``<case>.valid.py`` is a
hand-written VALID form where it differs. Every fixed / valid form prints ``RUNTIME-OK rank=N`` on
each of its ranks as its last line (the training ones after checking that the loss fell).

``test_rule_fix_gives_the_fixed_form`` checks that ``fabric-lsp check --fix`` turns each INVALID
script into its ``.fixed.py`` form; it is a strict xfail while the rule is not registered in
``fabric-lsp rules`` and becomes a plain test as soon as it is.

Multi-process cases use DDP with gloo on 2 CPU processes and a 15 s process-group timeout, so that
a hang (30 minutes by default) becomes a quick failure. DeepSpeed runs through the CPU test
subclass (see README.md).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [pytest.mark.runtime, pytest.mark.timeout(1500)]  # the first test may install the venv

HERE = Path(__file__).resolve().parent
RULES_DIR = HERE / "rules"
FABRIC_RUN = HERE / "fabric_run.py"  # `fabric run` without click

# Gloo's own words when a peer never joins the collective: Lightning has no message of its own for a
# collective run on a subset of ranks (fabric.py:867/915: save/load end in `self.barrier()`).
GLOO_LOST_PEER = r"Connection closed by peer|Timed out waiting \d+ms"
LAUNCH_FIRST = (
    "RuntimeError: To use Fabric with more than one device, you must call `.launch()` or use the CLI:"
    " `fabric run --help`."
)
BACKWARD_HOOK = (
    "RuntimeError: The current strategy and precision selection requires you to call `fabric.backward(loss)`"
    " instead of `loss.backward()`."
)


def forward_method_error(cls: str, name: str) -> str:
    """Lightning's message when a method of a wrapped model runs a module (wrappers.py:219-223)."""
    return (
        f"RuntimeError: You are calling the method `{cls}.{name}()` from outside the model. To avoid issues with"
        " the currently selected strategy, explicitly mark it as a forward method with"
        f" `fabric_model.mark_forward_method({name!r})` after `fabric.setup()`."
    )


@dataclass(frozen=True)
class Case:
    rule: str
    name: str
    error: str  # regular expression: the INVALID script's error (or warning, see `warns`)
    source: str  # where the message comes from, in lightning 2.6.6 unless said otherwise
    ranks: int = 1  # processes of the fixed / valid forms, each must print RUNTIME-OK
    warns: bool = False  # the INVALID script runs to the end; Lightning only warns
    fixed_runs: bool = True  # False: the .fixed.py form needs hardware this machine lacks (a GPU)
    gap: str = ""  # a check the registered rule does not make yet: its "reported" test is a strict xfail

    @property
    def invalid(self) -> Path:
        return RULES_DIR / self.rule / f"{self.name}.py"

    def form(self, kind: str) -> Path:
        return RULES_DIR / self.rule / f"{self.name}.{kind}.py"

    @property
    def forms(self) -> list[Path]:
        """The forms that run here (a .fixed.py that needs a GPU is only compared with the fix)."""
        kinds = ("fixed", "valid") if self.fixed_runs else ("valid",)
        return [p for p in map(self.form, kinds) if p.exists()]


CASES = [
    # FAB002: a collective on a subset of ranks (DDP, 2 processes)
    Case("FAB002", "guarded_save", GLOO_LOST_PEER, "gloo; fabric.py:867 (save ends in barrier)", ranks=2),
    Case("FAB002", "guarded_all_reduce", GLOO_LOST_PEER, "gloo; fabric.py:654 (all_reduce)", ranks=2),
    Case("FAB002", "rank_zero_first_save", GLOO_LOST_PEER, "gloo; fabric.py:726-731 + 867", ranks=2),
    Case("FAB002", "guarded_save_helper", GLOO_LOST_PEER, "gloo; fabric.py:867 (save, inside a helper)", ranks=2),
    Case("FAB002", "guarded_dist_barrier", GLOO_LOST_PEER, "gloo; torch.distributed.barrier", ranks=2),
    # the forward of a sharded model is a collective (FSDP2 through ModelParallel's parallelize_fn;
    # FSDPStrategy needs a GPU, connector.py:436)
    Case(
        "FAB002",
        "sharded_forward_on_rank_zero",
        GLOO_LOST_PEER,
        "gloo; model_parallel.py:185 + wrappers.py:130-136 (the forward all-gathers the shards)",
        ranks=2,
    ),
    # FAB003: a method other than forward that runs a module, on a wrapped model, without mark_forward_method
    Case("FAB003", "generate_under_ddp", re.escape(forward_method_error("TinyLM", "generate")), "wrappers.py:219-223"),
    Case(
        "FAB003", "encode_under_deepspeed", re.escape(forward_method_error("Encoder", "encode")), "wrappers.py:219-223"
    ),
    # FAB004: loss.backward() where Lightning needs fabric.backward(loss)
    Case("FAB004", "bf16_mixed_loss_backward", re.escape(BACKWARD_HOOK), "wrappers.py:370"),
    Case("FAB004", "deepspeed_loss_backward", re.escape(BACKWARD_HOOK), "wrappers.py:370"),
    # FAB005: DeepSpeed's contract (the CPU test subclass, one process)
    Case(
        "FAB005",
        "two_optimizers_one_setup",
        re.escape("ValueError: Currently only one optimizer is supported with DeepSpeed. Got 2 optimizers instead."),
        "strategies/deepspeed.py:349",
    ),
    Case(
        "FAB005",
        "backward_without_model",
        re.escape(
            "ValueError: When using multiple models + deepspeed, please provide the model used to perform"
            " the optimization: `self.backward(loss, model=model)`"
        ),
        "fabric.py:512",
    ),
    Case(
        "FAB005",
        "model_only_setup_zero2",
        re.escape("AssertionError: zero stage 2 requires an optimizer"),
        "deepspeed 0.19.8 runtime/engine.py (DeepSpeed's, not Lightning's), via strategies/deepspeed.py:364",
    ),
    Case(
        "FAB005",
        "clip_gradients",
        re.escape(
            "NotImplementedError: DeepSpeed handles gradient clipping automatically within the optimizer."
            " Make sure to set the `gradient_clipping` value in your Config."
        ),
        "strategies/deepspeed.py:561",
    ),
    Case(
        "FAB005",
        "init_module_empty_init_false",
        re.escape(
            "NotImplementedError: `empty_init=False` is not a valid choice with `DeepSpeedStrategy` when"
            " ZeRO stage 3 is enabled."
        ),
        "strategies/deepspeed.py:379",
    ),
    Case(
        "FAB005",
        "no_backward_sync",
        re.escape(
            "The `CPUDeepSpeedStrategy` does not support skipping the gradient synchronization."
            " Remove `.no_backward_sync()` from your code or choose a different strategy."
        ),
        "fabric.py:778 (rank_zero_warn; the context is a no-op)",
        warns=True,
    ),
    # FAB006: checkpoint calls (one CPU device, or the DeepSpeed CPU test subclass)
    Case(
        "FAB006",
        "swapped_save",
        re.escape("AttributeError: 'str' object has no attribute 'items'"),
        "strategies/strategy.py:410 (Python's, from state.items() on the path)",
    ),
    Case(
        "FAB006",
        "filter_lambda",
        re.escape("TypeError: Filter should be a dictionary, given <function"),
        "fabric.py:858",
    ),
    Case(
        "FAB006",
        "deepspeed_filter",
        re.escape(
            "TypeError: `DeepSpeedStrategy.save_checkpoint(..., filter=...)` is not supported because"
            " `DeepSpeedStrategy` manages the state serialization internally."
        ),
        "strategies/deepspeed.py:434",
    ),
    Case(
        "FAB006",
        "deepspeed_state_dict_in_state",
        re.escape("ValueError: Could not find a DeepSpeed model in the provided checkpoint state."),
        "strategies/deepspeed.py:441",
    ),
    Case(
        "FAB006",
        "deepspeed_load_without_state",
        re.escape("ValueError: Got DeepSpeedStrategy.load_checkpoint(..., state=None) but a state with at least "),
        "strategies/deepspeed.py:505",
    ),
    Case(
        "FAB006",
        "deepspeed_scheduler_key",
        re.escape("Your state has keys that collide with DeepSpeed's internal engine state.") + r".*lr_scheduler",
        "strategies/deepspeed.py:870 (rank_zero_warn; the save goes on)",
        warns=True,
    ),
    # FAB007: launch() misuse (DDP, 2 processes)
    Case("FAB007", "missing_launch", re.escape(LAUNCH_FIRST), "fabric.py:1195", ranks=2),
    # `launch(main(fabric))` runs main before launch: its first setup call raises L1, before
    # launch() could say "needs to be a callable" (fabric.py:996).
    Case("FAB007", "launch_called_function", re.escape(LAUNCH_FIRST), "fabric.py:1195", ranks=2),
    Case(
        "FAB007",
        "function_without_fabric_parameter",
        r"TypeError: `Fabric\.launch\(function=<function train at 0x[0-9a-f]+>\)` needs to take at least one"
        r" argument\. The launcher will pass in the `Fabric` object so you can use it inside the function\.",
        "fabric.py:1001",
        ranks=2,
    ),
    Case(
        "FAB007",
        "spawn_without_function",
        re.escape(
            "TypeError: To spawn processes with the `DDPStrategy` strategy, `.launch()` needs to be called with"
            " a function that contains the code to launch in processes."
        ),
        "fabric.py:1006",
        ranks=2,
    ),
    Case("FAB007", "setup_before_launch", re.escape(LAUNCH_FIRST), "fabric.py:1195", ranks=2),
    # FAB009: joint setup where the strategy needs separate setup. ModelParallel on CPU (FSDP and
    # XLAFSDP need an accelerator to wrap, so their fixed forms cannot run here).
    Case(
        "FAB009",
        "model_parallel_joint_setup",
        re.escape("AssertionError: the optimizer step did not change the model"),
        "no Lightning error (catalogue Q1): strategy.py:159 + model_parallel.py:185, parallelize_fn replaces the parameters",
    ),
]


#: Rules whose fix is unsafe by design (offered, applied only with ``--unsafe-fixes``).
UNSAFE_FIX_RULES = frozenset({"FAB009"})


def _registered_rules() -> set[str]:
    """Rule codes `fabric-lsp rules` lists (decides which fix tests are still expected to fail)."""
    proc = subprocess.run(
        [sys.executable, "-m", "fabric_lsp", "rules"], capture_output=True, text=True, timeout=120, check=True
    )
    return set(re.findall(r"^([A-Z]+\d{3})\b", proc.stdout, re.M))


REGISTERED = _registered_rules()


def assert_cases_match_folder(cases: list[Case], prefix: str) -> None:
    """Every script under rules/<prefix>*/ belongs to a listed case, every case has a form that runs."""
    listed = {c.invalid for c in cases} | {p for c in cases for p in c.forms} | {c.form("fixed") for c in cases}
    assert sorted(RULES_DIR.glob(f"{prefix}*/*.py")) == sorted(p for p in listed if p.exists())
    assert all(c.forms for c in cases), [c.name for c in cases if not c.forms]
    assert len({(c.rule, c.name) for c in cases}) == len(cases)


def test_case_list_matches_folder():
    assert_cases_match_folder(CASES, "FAB")


def _ok_ranks(stdout: str) -> set[int]:
    # Not anchored to lines: two ranks share stdout, and unbuffered prints interleave their newlines.
    return {int(m) for m in re.findall(r"RUNTIME-OK rank=(\d+)", stdout)}


def _copy(script: Path, folder: Path) -> Path:
    folder.mkdir()
    return Path(shutil.copy(script, folder / script.name))


def case_params(cases: list[Case]):
    return [pytest.param(c, id=f"{c.rule}-{c.name}") for c in cases]


@pytest.mark.parametrize("case", case_params(CASES))
def test_invalid_fails_and_fixed_runs(case: Case, tmp_path, start_script):
    assert_invalid_fails_and_forms_run(case, tmp_path, start_script)


def assert_invalid_fails_and_forms_run(case: Case, tmp_path: Path, start_script) -> None:
    """All forms run at once, each in its own folder (checkpoints, spawn re-imports)."""
    invalid = start_script(_copy(case.invalid, tmp_path / "invalid"))
    forms = [start_script(_copy(p, tmp_path / p.name.split(".")[1])) for p in case.forms]

    before = invalid.result()
    if case.warns:
        assert before.returncode == 0, before.explain()
    else:
        assert before.returncode != 0, f"the INVALID script did not fail:\n{before.explain()}"
        assert _ok_ranks(before.stdout) != set(range(case.ranks)), before.explain()
    assert re.search(case.error, before.stderr), f"expected /{case.error}/ ({case.source}):\n{before.explain()}"

    for started in forms:
        after = started.result()
        assert after.returncode == 0, f"{started.script.name} failed:\n{after.explain()}"
        assert _ok_ranks(after.stdout) == set(range(case.ranks)), after.explain()
        if case.warns:
            assert not re.search(case.error, after.stderr), after.explain()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


CLI_CONFLICT = (
    "ValueError: Your code has `Fabric(devices=2, ...)` but it conflicts with the value `--devices=1`"
    " set through the CLI."
)


@pytest.mark.parametrize(("devices", "expected"), [("2", None), ("1", CLI_CONFLICT)], ids=["devices-2", "default"])
def test_fabric_run_exempts_a_missing_launch(devices, expected, tmp_path, run_script):
    """Why FAB007 can only warn about a missing ``launch()``: ``fabric run`` starts the processes itself,
    so FAB007/missing_launch.py runs under ``fabric run --accelerator=cpu --strategy=ddp --devices=2``;
    with the command's default ``--devices=1`` it conflicts with ``devices=2`` in the code
    (connector.py:550)."""
    shutil.copy(FABRIC_RUN, tmp_path)
    script = Path(shutil.copy(RULES_DIR / "FAB007" / "missing_launch.py", tmp_path))
    res = run_script(tmp_path / FABRIC_RUN.name, "cpu", "ddp", devices, str(_free_port()), script.name)
    if expected is None:
        assert res.returncode == 0, res.explain()
        assert _ok_ranks(res.stdout) == {0, 1}, res.explain()
    else:
        assert res.returncode != 0 and expected in res.stderr, res.explain()
        assert not _ok_ranks(res.stdout), res.explain()


def _code(source: str) -> str:
    """The script without its module docstring (which says INVALID / FIXED), normalised by ast."""
    tree = ast.parse(source)
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
        tree.body = tree.body[1:]
    return ast.unparse(tree)


def pending_params(cases: Iterable[Case]):
    """The cases, each a strict xfail while its rule is not registered."""
    for c in cases:
        pending = c.rule not in REGISTERED or bool(c.gap)
        reason = c.gap or f"{c.rule} is not registered yet"
        marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)] if pending else []
        yield pytest.param(c, id=f"{c.rule}-{c.name}", marks=marks)


@pytest.mark.parametrize("case", list(pending_params(c for c in CASES if c.form("fixed").exists())))
def test_rule_fix_gives_the_fixed_form(case: Case, tmp_path, fabric_lsp):
    assert_fix_gives_fixed_form(case, tmp_path, fabric_lsp)


def assert_reported(case: Case, tmp_path: Path, fabric_lsp) -> Path:
    """`check --format json` reports the rule on (a copy of) the INVALID script; returns the copy."""
    script = Path(shutil.copy(case.invalid, tmp_path / case.invalid.name))
    found = fabric_lsp("check", "--format", "json", script.name, cwd=tmp_path)
    assert found.returncode in (0, 1) and "internal error" not in found.stderr, found.explain()
    codes = {f.get("code") for f in json.loads(found.stdout or "[]")}
    assert case.rule in codes, f"{case.rule} not reported:\n{found.explain()}"
    return script


def assert_fix_gives_fixed_form(case: Case, tmp_path: Path, fabric_lsp) -> None:
    """`check` reports the rule on the INVALID script and `check --fix` writes the .fixed.py code."""
    script = assert_reported(case, tmp_path, fabric_lsp)
    unsafe = ["--unsafe-fixes"] if case.rule in UNSAFE_FIX_RULES else []
    fix = fabric_lsp("check", "--fix", *unsafe, script.name, cwd=tmp_path)
    assert fix.returncode in (0, 1) and "internal error" not in fix.stderr, fix.explain()
    assert _code(script.read_text()) == _code(case.form("fixed").read_text())
