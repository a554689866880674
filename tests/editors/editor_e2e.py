"""Constants and checks shared by the editor end-to-end tests (see conftest.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ci_env import in_ci

if TYPE_CHECKING:  # the editor runs' record, defined with the fixtures
    from conftest import Run

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
EDITORS = REPO / "editors"
INSTALL_SCRIPT = REPO / ".ci" / "install.d" / "10-editors.sh"
NVIM_VENV = Path(os.environ.get("FABRIC_LSP_NVIM_VENV", REPO / ".venv-nvim"))

TITLE = "Set up model and optimizer jointly with `fabric.setup(...)`"
EDITOR_TIMEOUT_S = 90  # outer `timeout` around one editor run
WAIT_MS = 30_000  # each wait inside a driver (attach, diagnostic, edit, clean)

# scenario name -> (input, expected output) under tests/editors/data/
SCENARIOS = {
    "ascii": "deepspeed_ascii",
    # non-ASCII (ü, 🚀, 漢字) in comments and a string literal before the flagged call, and
    # in a trailing comment after it on the flagged line
    "unicode": "deepspeed_unicode",
    # non-ASCII identifiers: non-ASCII text *before* the call on the flagged line, so the
    # diagnostic's start column differs between UTF-8, UTF-16 and characters
    "unicode_names": "deepspeed_unicode_names",
}

IN_CI = in_ci()


def units(text: str, encoding: str) -> int:
    """Length of text in LSP position units of the given encoding."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    if encoding == "utf-32":
        return len(text)
    raise AssertionError(f"unknown position encoding {encoding!r}")


def flagged_call(source: str):
    """(line index, prefix before the call, call text) of the setup_optimizers call."""
    for i, line in enumerate(source.splitlines()):
        m = re.search(r"fabric\.setup_optimizers\([^()]*\)", line)
        if m:
            return i, line[: m.start()], m.group(0)
    raise AssertionError("no fabric.setup_optimizers call in the sample")


def check_lsp_diagnostic(run: Run, encoding: str, severity: int = 1):
    """The FAB001 diagnostic as the server sent it (the last publish holding it, i.e. what the
    user acted on): code, source, severity, exact range in the negotiated encoding."""
    with_fab = [
        p for p in run.report["publishes"] if any(d.get("code") == "FAB001" for d in p.get("diagnostics") or [])
    ]
    assert with_fab, "no publishDiagnostics with FAB001\n" + run.describe()
    diags = [d for d in with_fab[-1]["diagnostics"] if d.get("code") == "FAB001"]
    assert len(diags) == 1, run.describe()
    d = diags[0]
    rng = d["range"] if "range" in d else {"start": d["start"], "end": d["end"]}
    line, prefix, call = flagged_call(run.source)
    assert d["source"] == "fabric-lsp", run.describe()
    assert d["severity"] == severity, f"severity: want {severity}, got {d['severity']}\n" + run.describe()
    start = {"line": line, "character": units(prefix, encoding)}
    end = {"line": line, "character": units(prefix + call, encoding)}
    assert rng["start"] == start, f"start in {encoding}: want {start}, got {rng['start']}\n" + run.describe()
    assert rng["end"] == end, f"end in {encoding}: want {end}, got {rng['end']}\n" + run.describe()


README = REPO / "README.md"
EDITORS_DOC = REPO / "docs" / "editors.md"


def editors_doc() -> tuple[Path, str]:
    """The user-facing editors documentation: README.md's editors section once it is merged
    there (between <!-- editors:begin --> and <!-- editors:end -->), else docs/editors.md."""
    if README.exists():
        m = re.search(r"<!-- editors:begin -->\n(.*?)<!-- editors:end -->", README.read_text(encoding="utf-8"), re.S)
        if m and m.group(1).strip():
            return README, m.group(1)
    return EDITORS_DOC, EDITORS_DOC.read_text(encoding="utf-8")


def doc_snippet(name: str) -> str:
    """The code block that follows `<!-- e2e:NAME -->` in the editors documentation."""
    path, text = editors_doc()
    m = re.search(r"<!-- e2e:" + re.escape(name) + r" -->\n```[a-z]*\n(.*?)```", text, re.S)
    assert m, f"no `<!-- e2e:{name} -->` code block in {path}"
    return m.group(1)


def check_file(run: Run):
    """The quick fix gave exactly the expected program, on disk and in the editor's buffer."""
    disk = run.disk
    assert disk == run.expected, (
        f"file on disk after the fix:\n{disk}\n--- expected:\n{run.expected}\n" + run.describe()
    )
    assert run.report.get("buffer_after") == disk, run.describe()
    assert run.report.get("modified_after") is False, run.describe()


# --------------------------------------------------------------------------- FAB010
# A SLURM job script that starts one task per node for a Fabric that wants two devices: FAB010 in
# train.py at `devices=2` and, in the open script, on its `#SBATCH --ntasks-per-node=1` line.
# The layout of FAB010's first INVALID example: the script next to the file it launches.
FAB010_TRAIN = """\
from lightning.fabric import Fabric

fabric = Fabric(devices=2, strategy="ddp", accelerator="cpu")
fabric.launch()
"""
FAB010_SCRIPT = """\
#!/bin/bash
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
srun python train.py
"""
# the same job without a shebang: an editor knows it is a shell script only by its file name
FAB010_SCRIPT_NO_SHEBANG = FAB010_SCRIPT.split("\n", 1)[1]
FAB010_TRAIN_LINE = 2  # 0-based: `fabric = Fabric(devices=2, ...)`
FAB010_FLAGGED_SCRIPT_LINE = "#SBATCH --ntasks-per-node=1"


def fab010_project(root: Path, script_name: str = "job.sbatch", shebang: bool = True) -> tuple[Path, Path, Path]:
    """(project, train.py, the job script) under root, pyproject.toml marking the project root."""
    proj = root / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[project]\nname = "e2e"\nversion = "0"\n')
    train = proj / "train.py"
    train.write_text(FAB010_TRAIN, encoding="utf-8")
    script = proj / script_name
    script.write_text(FAB010_SCRIPT if shebang else FAB010_SCRIPT_NO_SHEBANG, encoding="utf-8")
    return proj, train, script


def fab010_ranges(script: Path) -> dict[str, dict]:
    """Where FAB010 is expected, per file name: in train.py the value of `devices=2`, in the script
    its whole `#SBATCH --ntasks-per-node=1` line (ASCII: the same in every position encoding)."""
    train_line = FAB010_TRAIN.splitlines()[FAB010_TRAIN_LINE]
    col = train_line.index("devices=2") + len("devices=")
    script_line = script.read_text(encoding="utf-8").splitlines().index(FAB010_FLAGGED_SCRIPT_LINE)
    return {
        "train.py": {
            "start": {"line": FAB010_TRAIN_LINE, "character": col},
            "end": {"line": FAB010_TRAIN_LINE, "character": col + 1},
        },
        script.name: {
            "start": {"line": script_line, "character": 0},
            "end": {"line": script_line, "character": len(FAB010_FLAGGED_SCRIPT_LINE)},
        },
    }


def check_fab010_publishes(run: Run, script: Path):
    """FAB010 as the server published it for train.py and the script (the last publish holding it):
    one error from fabric-lsp at the expected range; where the record keeps relatedInformation, it
    points at the other file."""
    expected = fab010_ranges(script)
    for name in ("train.py", script.name):
        with_fab = [
            p
            for p in run.report["publishes"]
            if p["uri"].endswith("/" + name) and any(d.get("code") == "FAB010" for d in p.get("diagnostics") or [])
        ]
        assert with_fab, f"no publishDiagnostics with FAB010 for {name}\n" + run.describe()
        diags = [d for d in with_fab[-1]["diagnostics"] if d.get("code") == "FAB010"]
        assert len(diags) == 1, run.describe()
        d = diags[0]
        rng = d["range"] if "range" in d else {"start": d["start"], "end": d["end"]}
        assert rng == expected[name], f"{name}: want {expected[name]}, got {rng}\n" + run.describe()
        assert (d["severity"], d["source"]) == (1, "fabric-lsp"), run.describe()
        if "relatedInformation" in d:
            other = script.name if name == "train.py" else "train.py"
            related = {
                (r["location"]["uri"].rsplit("/", 1)[-1], r["location"]["range"]["start"]["line"])
                for r in d["relatedInformation"]
            }
            assert (other, expected[other]["start"]["line"]) in related, run.describe()
