"""Adopting fabric-lsp on a large codebase: ``--add-noqa`` silences every current finding in
place, ``--show-files`` says which files a check reads."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

from fabric_lsp.cli.add_noqa import add_noqa
from fabric_lsp.engine import Analyzer
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import ALL_RULES

TRAIN = textwrap.dedent(
    """\
    from lightning.fabric import Fabric
    fabric = Fabric(accelerator="cuda", devices=2, strategy="deepspeed")
    fabric.launch()
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(
        optimizer)  # noqa: E501
    """
)


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "fabric_lsp", "check", *args], cwd=cwd, capture_output=True, text=True)


def test_add_noqa_silences_every_finding_and_keeps_other_codes(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    assert cli(".", cwd=tmp_path).returncode == 1
    done = cli("--add-noqa", ".", cwd=tmp_path)
    assert done.returncode == 0 and "Added 1 noqa directive." in done.stderr
    text = (tmp_path / "train.py").read_text()
    assert "    optimizer)  # noqa: E501, FAB001\n" in text
    assert cli(".", cwd=tmp_path).returncode == 0
    again = cli("--add-noqa", ".", cwd=tmp_path)
    assert "Added 0 noqa directives." in again.stderr and (tmp_path / "train.py").read_text() == text


def findings(text: str):
    return Analyzer(Workspace(), ALL_RULES).analyze(text, "/tmp/t.py")


def test_a_comment_never_goes_inside_a_string_or_after_a_backslash():
    head = textwrap.dedent(
        """\
        from lightning.fabric import Fabric
        fabric = Fabric(accelerator="cuda", devices=2, strategy="deepspeed")
        fabric.launch()
        model = fabric.setup_module(model)
        """
    )
    # the call's first line ends inside a string: the comment goes on its last line
    text = head + 'optimizer = fabric.setup_optimizers(optimizer, """a\nb""")\n'
    found = findings(text)
    assert [f.code for f in found] == ["FAB001"]
    new, added, problems = add_noqa(text, found)
    assert added == 1 and not problems
    assert new.endswith('b""")  # noqa: FAB001\n') and findings(new) == []
    # every line of it ends inside a string or in a backslash: nothing is written, and it says so
    text = head + 'optimizer = fabric.setup_optimizers(optimizer, """a\nb""") if True else \\\n    None\n'
    ast.parse(text)
    new, added, problems = add_noqa(text, findings(text))
    assert (new, added) == (text, 0) and problems == ["FAB001 at line 5: no line of it can end in a comment"]


def test_show_files_lists_what_a_check_reads(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "skip.py").write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("ignored/\n")
    (tmp_path / "notes.txt").write_text("not python\n")
    shown = cli("--show-files", ".", cwd=tmp_path)
    assert shown.returncode == 0
    assert shown.stdout.splitlines() == ["train.py"]


def test_add_noqa_refuses_to_combine_with_fix(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    refused = cli("--add-noqa", "--fix", ".", cwd=tmp_path)
    assert refused.returncode == 2 and "--add-noqa" in refused.stderr
    assert (tmp_path / "train.py").read_text() == TRAIN
