"""Real Emacs (Debian 12: Emacs 28.2 + elpa-eglot 1.9) in batch mode, configured with the shipped
editors/emacs/fabric-lsp.el.

Each run: open the DeepSpeed script, M-x eglot (the server comes from eglot-server-programs),
(flymake-start), wait for FAB001, check its exact range (eglot 1.9 offers no positionEncodings:
UTF-16; Emacs columns are characters), M-x eglot-code-actions at it with kind quickfix, save,
check the file on disk and that FAB001 is gone. eglot 1.9 does not announce codeAction
resolveSupport, so the server must send the edit eagerly with the action.

FAB010 (batch-job script): with fabric-lsp.el's opt-in sh-mode line, M-x eglot in train.py shows
FAB010 at `devices=2`; the SLURM script job.sbatch (sh-mode through its #!/bin/bash line) gets its
own fabric-lsp from M-x eglot and shows FAB010 on its `#SBATCH --ntasks-per-node=1` line.
"""

from __future__ import annotations

import pytest
from editor_e2e import (
    EDITORS,
    FAB010_FLAGGED_SCRIPT_LINE,
    FAB010_TRAIN,
    FAB010_TRAIN_LINE,
    HERE,
    TITLE,
    check_fab010_publishes,
    check_file,
    check_lsp_diagnostic,
    doc_snippet,
    fab010_project,
    fab010_ranges,
    flagged_call,
)

pytestmark = [pytest.mark.editor, pytest.mark.timeout(240)]

DRIVER = HERE / "emacs" / "drive.el"


SHIPPED_EL = EDITORS / "emacs" / "fabric-lsp.el"


def run_emacs(emacs, scenario, project, run_editor, *, load_shipped=True, extra_el="", cu_command="", severity="error"):
    proj, path, source, expected = project(scenario)
    env = {"FABRIC_E2E_FILE": str(path), "FABRIC_E2E_SEVERITY": severity}
    if load_shipped:
        env["FABRIC_E2E_EL"] = str(SHIPPED_EL)
    if extra_el:
        extra = proj.parent / "extra.el"
        extra.write_text(extra_el, encoding="utf-8")
        env["FABRIC_E2E_EXTRA_EL"] = str(extra)
    if cu_command:
        env["FABRIC_E2E_CU_COMMAND"] = cu_command
    return run_editor(
        # not -Q: Debian's site-start.d puts elpa-eglot on the load-path
        [str(emacs.exe), "--batch", "-l", str(DRIVER)],
        cwd=proj,
        path=path,
        scenario=scenario,
        source=source,
        expected=expected,
        env=env,
    )


def check_session(run, *, severity="error"):
    rep = run.report
    assert run.returncode == 0 and rep.get("ok") is True, run.describe()
    assert rep["steps"] == ["opened", "attached", "diagnosed", "edited", "written", "clean"], run.describe()
    assert rep["major_mode"] == "python-mode"
    assert rep["server_command"] == ["fabric-lsp"], run.describe()
    assert rep["server_name"] == "fabric-lsp", run.describe()

    # the diagnostic as sent (UTF-16: eglot 1.9 offers no positionEncodings) and as flymake
    # shows it (character columns)
    check_lsp_diagnostic(run, "utf-16", {"error": 1, "warning": 2}[severity])
    d = rep["diagnostic"]
    assert d["col"] == d["expected_col"] >= 0, run.describe()
    line_no = flagged_call(run.source)[0]
    assert (d["line"], d["line_text"]) == (line_no, run.source.splitlines()[line_no]), run.describe()
    assert d["type"] == f"eglot-{severity}", run.describe()
    assert d["text"].startswith("fabric-lsp [FAB001]: "), run.describe()

    # the fix is first and carries its edit (no codeAction/resolve: eglot 1.9 can't); with
    # more than one quickfix eglot prompts, and RET (its default) picks the fix
    assert all(m["kind"] == "quickfix" for m in rep["menu"]), run.describe()
    fix = rep["menu"][0]
    assert (fix["title"], fix["has_edit"]) == (TITLE, True), run.describe()
    if len(rep["menu"]) > 1:
        assert [p["default"] for p in rep["prompts"]] == [TITLE], run.describe()
    assert ":codeAction/resolve" not in rep["requests"], run.describe()

    check_file(run)


@pytest.mark.parametrize("scenario", ["ascii", "unicode", "unicode_names"])
def test_eglot_shipped_config(scenario, emacs, project, run_editor):
    """fabric-lsp.el loaded (before eglot), then M-x eglot."""
    run = run_emacs(emacs, scenario, project, run_editor)
    check_session(run)
    rep = run.report
    # the shipped entry is in place and eglot's own entries (other languages, the other Python
    # servers) survived loading it before eglot itself
    assert rep["python_entry"] == '((python-mode python-ts-mode) "fabric-lsp")', run.describe()
    assert rep["n_python_entries"] >= 2 and rep["n_server_programs"] > 10, run.describe()
    assert rep["shell_prompts"] == [], run.describe()


def test_eglot_on_demand_without_config(emacs, project, run_editor):
    """The documented alternative that keeps another default Python server: no fabric-lsp.el,
    `C-u M-x eglot RET fabric-lsp RET`."""
    run = run_emacs(emacs, "unicode_names", project, run_editor, load_shipped=False, cu_command="fabric-lsp")
    check_session(run)
    assert run.report["python_entry"] == "nil", run.describe()  # eglot's defaults untouched
    assert len(run.report["shell_prompts"]) == 1, run.describe()


def test_eglot_settings_snippet(emacs, project, run_editor):
    """The documented eglot-workspace-configuration snippet (certainSeverity "warning")."""
    run = run_emacs(emacs, "unicode", project, run_editor, extra_el=doc_snippet("emacs-settings"), severity="warning")
    check_session(run, severity="warning")


# --------------------------------------------------------------------------- FAB010


def sh_mode_opt_in() -> str:
    """The opt-in line for shell buffers, exactly as fabric-lsp.el's commentary shows it."""
    lines = SHIPPED_EL.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(";;   (with-eval-after-load 'eglot"))
    snippet = []
    for line in lines[start:]:
        if not line.startswith(";;   "):
            break
        snippet.append(line[len(";;   ") :])
    text = "\n".join(snippet) + "\n"
    assert "sh-mode" in text and "fabric-lsp-command" in text and "auto-mode-alist" in text, text
    return text


@pytest.mark.parametrize(("script_name", "shebang"), [("job.sbatch", True), ("job.slurm", False)])
def test_eglot_fab010_batch_script(script_name, shebang, emacs, tmp_path, run_editor):
    """fabric-lsp.el plus its opt-in lines for shell buffers: M-x eglot in train.py gives FAB010 at
    `devices=2`; the job script opens in sh-mode (through its #!/bin/bash line, or without one
    through the opt-in auto-mode-alist line), M-x eglot there starts fabric-lsp for it, and FAB010
    shows on its `#SBATCH --ntasks-per-node=1` line."""
    proj, train, script = fab010_project(tmp_path, script_name, shebang)
    extra = tmp_path / "extra.el"
    extra.write_text(sh_mode_opt_in(), encoding="utf-8")
    env = {
        "FABRIC_E2E_FILE": str(train),
        "FABRIC_E2E_SCRIPT": str(script),
        "FABRIC_E2E_SCENARIO": "fab010",
        "FABRIC_E2E_EL": str(SHIPPED_EL),
        "FABRIC_E2E_EXTRA_EL": str(extra),
    }
    run = run_editor(
        [str(emacs.exe), "--batch", "-l", str(DRIVER)],
        cwd=proj,
        path=train,
        scenario="fab010",
        source=FAB010_TRAIN,
        expected=FAB010_TRAIN,
        env=env,
    )
    rep = run.report
    assert run.returncode == 0 and rep.get("ok") is True, run.describe()
    assert rep["steps"] == [
        "opened",
        "attached",
        "python diagnosed",
        "script opened",
        "script attached",
        "script diagnosed",
    ], run.describe()
    assert rep["major_mode"] == "python-mode", run.describe()
    assert rep["script_major_mode"] == "sh-mode", run.describe()
    # Eglot picked fabric-lsp from eglot-server-programs in both buffers (one server each)
    assert rep["server_command"] == rep["script_server_command"] == ["fabric-lsp"], run.describe()
    assert rep["server_name"] == rep["script_server_name"] == "fabric-lsp", run.describe()

    # as sent (UTF-16; ASCII lines) with the other file as related information ...
    check_fab010_publishes(run, script)
    # ... and as flymake shows them (character columns)
    ranges = fab010_ranges(script)
    for key, name, line_text in (
        ("python_diagnostics", "train.py", FAB010_TRAIN.splitlines()[FAB010_TRAIN_LINE]),
        ("script_diagnostics", script.name, FAB010_FLAGGED_SCRIPT_LINE),
    ):
        [d] = rep[key]
        want = ranges[name]
        assert (d["line"], d["col"], d["end_col"]) == (
            want["start"]["line"],
            want["start"]["character"],
            want["end"]["character"],
        ), run.describe()
        assert d["line_text"] == line_text, run.describe()
        assert d["type"] == "eglot-error", run.describe()
        assert d["text"].startswith("fabric-lsp [FAB010]: "), run.describe()
