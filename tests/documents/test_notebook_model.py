"""fabric_lsp.documents.notebook: the program of a notebook, the position map, fixes split back into
cells, and edits spliced into the .ipynb text without touching anything else."""

from __future__ import annotations

import json

import pytest
from fabric_lsp.documents.notebook import Cell, NotebookError, NotebookFile, Program, cell_lines, is_notebook
from fabric_lsp.engine.findings import Applicability, Edit, Finding, Fix, Pos, Related, Severity, Span
from fabric_lsp.engine.python.text import Lines, apply_edits
from hypothesis import given, settings
from hypothesis import strategies as st


def _program(*texts: str, python=None) -> Program:
    return Program([Cell(i, t, True if python is None else python[i]) for i, t in enumerate(texts)])


def _finding(span: Span, *edits: Edit, related=()) -> Finding:
    fix = Fix("fix", Applicability.SAFE, tuple(edits)) if edits else None
    return Finding("FAB001", Severity.ERROR, "m", span, tuple(related), fix)


def test_ipython_lines_are_replaced_in_place():
    cell = "%load_ext autoreload\nfiles = !ls\nfor f in files:\n    %time print(f)\nlen?\n!echo a \\\n  b\nx = 1"
    p = _program(cell)
    lines = Lines(p.text)
    assert [lines.content(i).split("  #")[0] for i in range(8)] == [
        "pass",
        "files = None",
        "for f in files:",
        "    pass",
        "pass",
        "pass",
        "",  # a continuation line: a comment at its indentation
        "x = 1",
    ]
    assert lines.content(6) == f"  # {p.marker}"
    compile(p.text, "<nb>", "exec")
    assert p.to_cell(Pos(7, 4)) == (0, Pos(7, 4))


def test_cells_left_out_of_the_program():
    p = _program("x = 1", "%%bash\necho hi", "%%time\ny = 2", "# md", "z = 3", python=[True, True, True, False, True])
    assert [r.index for r in p.ranges] == [0, 2, 4]
    assert "echo" not in p.text and "# md" not in p.text and "y = 2" in p.text
    assert p.to_program(1, Pos(0, 0)) is None and p.to_program(4, Pos(0, 2)) == Pos(5, 2)
    assert not p.in_program(3) and p.in_program(4)


def test_positions_map_both_ways_and_boundaries_belong_to_no_cell():
    p = _program("a = 1\nb = 2", "c = 3\n")
    assert p.to_cell(Pos(1, 3)) == (0, Pos(1, 3))
    assert p.to_cell(Pos(2, 0)) is None  # the boundary line
    assert p.to_cell(Pos(2, 0), end=True) == (0, Pos(1, 5))  # the end of cell 0
    assert p.to_cell(Pos(3, 2)) == (1, Pos(0, 2))
    assert p.to_cell(Pos(4, 0)) == (1, Pos(1, 0))  # the empty last line of "c = 3\n"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet="ab = %!\n\t\r(é", max_size=30), min_size=1, max_size=5))
def test_every_cell_position_round_trips(texts):
    p = _program(*texts)
    for index, text in enumerate(texts):
        if not p.in_program(index):
            continue
        for line, content in enumerate(cell_lines(text)):
            for col in range(len(content.rstrip("\r\n")) + 1):
                prog = p.to_program(index, Pos(line, col))
                assert p.to_cell(prog) == (index, Pos(line, col))
    assert p.split(p.text) == {r.index: texts[r.index] for r in p.ranges}


def test_findings_related_and_fixes_map_to_their_cells():
    p = _program("fabric = F()", "m = fabric.setup_module(m)\no = fabric.setup_optimizers(o)")
    f = _finding(
        Span.of(3, 4, 3, 30),
        Edit(Span.of(2, 0, 3, 0), ""),
        Edit(Span.of(3, 0, 3, 30), "m, o = fabric.setup(m, o)"),
        related=(Related("created", Span.of(0, 9, 0, 12)), Related("elsewhere", Span.of(1, 0, 1, 1), path="/x.py")),
    )
    mapped = p.to_cells(f)
    assert mapped is not None and mapped.cell == 1 and mapped.finding.span == Span.of(1, 4, 1, 30)
    assert mapped.related_cells == (0, None)
    assert [r.span for r in mapped.finding.related] == [Span.of(0, 9, 0, 12), Span.of(1, 0, 1, 1)]
    assert [e.span for e in mapped.finding.fix.edits] == [Span.of(0, 0, 1, 0), Span.of(1, 0, 1, 30)]
    fixed = apply_edits(p.text, f.fix.edits)
    assert p.changed_cells(fixed) == {1: "m, o = fabric.setup(m, o)"}


def test_a_fix_spanning_cells_or_touching_ipython_is_refused():
    p = _program("m = s(m)", "%time x\no = t(o)")
    across = _finding(Span.of(3, 0, 3, 8), Edit(Span.of(0, 0, 1, 0), ""), Edit(Span.of(3, 0, 3, 8), "new"))
    magic = _finding(Span.of(3, 0, 3, 8), Edit(Span.of(2, 0, 3, 8), "new"))
    joins = _finding(Span.of(3, 0, 3, 8), Edit(Span.of(3, 8, 4, 0), ""))  # would join the boundary
    for f in (across, magic, joins):
        assert p.to_cells(f).finding.fix is None
        assert p.fixable([f])[0].fix is None
    past_the_line = _finding(Span.of(3, 0, 3, 8), Edit(Span.of(3, 0, 3, 9), ""))  # would eat the newline
    assert p.fixable([past_the_line])[0].fix is None
    whole_line = _finding(Span.of(3, 0, 3, 8), Edit(Span.of(3, 0, 4, 0), ""))
    assert p.fixable([whole_line])[0].fix is not None
    assert p.changed_cells(apply_edits(p.text, whole_line.fix.edits)) == {1: "%time x"}


def test_relabel_names_cells():
    p = _program("a = 1\nb = 2", "c = 3")
    assert p.relabel("- x (nb.ipynb:2) and nb.ipynb:4, other.py:4, nb.ipynb:3", "nb.ipynb") == (
        "- x (nb.ipynb:cell 1:2) and nb.ipynb:cell 2:1, other.py:4, nb.ipynb:3"
    )


def test_split_restores_ipython_lines_after_lines_move():
    p = _program("a = 1\n%time b = 2\n!ls\nc = 3")
    fixed = apply_edits(p.text, [Edit(Span.of(0, 0, 1, 0), "z = 0\ny = 0\n")])
    assert p.changed_cells(fixed) == {0: "z = 0\ny = 0\n%time b = 2\n!ls\nc = 3"}
    with pytest.raises(ValueError):
        p.split(p.text.replace(p.boundary, "# gone"))


def _nb(cells, crlf: bool = False, **dump) -> str:
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, **dump)
    return text.replace("\n", "\r\n") if crlf else text


@pytest.mark.parametrize(
    "dump",
    [
        {"indent": 1, "sort_keys": True, "ensure_ascii": False},
        {"indent": 2, "ensure_ascii": True},
        {"indent": "\t"},
        {},
        {"separators": (",", ":")},
        {"indent": 1, "crlf": True},
    ],
    ids=["jupyter", "indent2-ascii", "tabs", "one-line", "compact", "crlf"],
)
def test_with_cells_touches_only_the_edited_source(dump):
    cells = [
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": ["# é\n", "text"]},
        {
            "cell_type": "code",
            "id": "c",
            "metadata": {"k": [1, 2]},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["é\n"]}],
            "execution_count": 1,
            "source": ["x = 'é'\n", "y = 2"],
        },
        {"cell_type": "code", "id": "d", "metadata": {}, "outputs": [], "execution_count": None, "source": "z = 3\n"},
    ]
    raw = _nb(cells, **dump)
    nb = NotebookFile.parse(raw)
    assert nb.with_cells({}) == raw
    assert nb.with_cells({1: "x = 'é'\ny = 2"}) == raw  # the same text gives the same bytes
    new = nb.with_cells({1: "x = 'é'\n", 2: "w = 4\n"})
    expected = json.loads(raw)
    expected["cells"][1]["source"] = ["x = 'é'\n"]
    expected["cells"][2]["source"] = "w = 4\n"
    assert new == _nb(expected["cells"], **dump)


def test_raw_positions_count_escapes():
    raw = _nb(
        [{"cell_type": "code", "metadata": {}, "outputs": [], "source": ['s = "\u00e9\\t"; fabric\n', "x"]}],
        indent=1,
        ensure_ascii=True,
    )
    nb = NotebookFile.parse(raw)
    line = raw.splitlines()[nb.raw_pos(0, Pos(0, 0)).line]
    pos = nb.raw_pos(0, Pos(0, 11))
    assert raw.splitlines()[pos.line][pos.col :].startswith("fabric")
    assert line.strip().startswith('"s = \\"\\u00e9')
    end = nb.raw_pos(0, Pos(1, 1))
    assert raw.splitlines()[end.line][end.col] == '"'


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            "{",
            "not a valid notebook: invalid JSON"
            " (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
        ),
        ("[]", "not a valid notebook: no `cells` list"),
        ('{"nbformat": 3, "worksheets": []}', "nbformat 3 notebooks are not supported (only nbformat 4)"),
        (
            '{"cells": [{"cell_type": "code", "source": [1]}]}',
            "not a valid notebook: cell 1 has a `source` that is not text",
        ),
    ],
)
def test_unreadable_notebooks_give_one_line(raw, message):
    with pytest.raises(NotebookError) as info:
        NotebookFile.parse(raw)
    assert str(info.value) == message and "\n" not in str(info.value)


def test_language_of_the_notebook_and_of_a_cell():
    r_nb = json.dumps(
        {
            "cells": [{"cell_type": "code", "source": "x <- 1"}],
            "metadata": {"kernelspec": {"language": "R", "name": "ir"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )
    assert NotebookFile.parse(r_nb).program.ranges == []
    cells = [
        {"cell_type": "code", "metadata": {"vscode": {"languageId": "sql"}}, "source": "select 1"},
        {"cell_type": "code", "source": "y = 1"},
    ]
    nb = NotebookFile.parse(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert [r.index for r in nb.program.ranges] == [1]


def test_is_notebook():
    assert is_notebook("/a/Train.IPYNB") and not is_notebook("/a/train.py") and not is_notebook(None)


def test_telling_a_file_s_kind_imports_no_notebook_script_or_analysis_module():
    """A cached run tells every file's kind: by the suffixes in ``facts`` (the semantic model's
    too), without importing the notebook reader, the batch-script parser or the engine."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from fabric_lsp.documents.check import Kind, kind_of\n"
        "assert [kind_of(p) for p in ('a.IPYNB', 'job.sbatch', 'run.sh', 'x.py', None)] == "
        "[Kind.NOTEBOOK, Kind.BATCH_SCRIPT, Kind.BATCH_SCRIPT, Kind.MODULE, Kind.MODULE]\n"
        "loaded = {'fabric_lsp.documents.notebook', 'fabric_lsp.engine.program.batch_scripts', 'fabric_lsp.engine.analyzer'}\n"
        "assert not loaded & set(sys.modules), loaded & set(sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
