"""The editors documentation shows, verbatim, the configuration files the editor tests load.

Fast (no editor needed), so it is not marked `editor`. docs/editors.md is generated from
tests/editors/editors.md.in by tests/editors/render_docs.py; README.md's editors section (between
<!-- editors:begin --> and <!-- editors:end -->), once merged, must show the same files.
"""

from __future__ import annotations

import re

import pytest
from editor_e2e import EDITORS, EDITORS_DOC, README, REPO, editors_doc

SHIPPED = [
    "editors/neovim/lsp/fabric_lsp.lua",
    "editors/neovim/lspconfig.lua",
    "editors/neovim/legacy.lua",
    "editors/emacs/fabric-lsp.el",
]


def code_blocks(text: str) -> list[str]:
    return re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M)


def test_docs_editors_md_is_rendered():
    import render_docs  # tests/editors/render_docs.py

    assert EDITORS_DOC.read_text(encoding="utf-8") == render_docs.render(), (
        "docs/editors.md is stale: run `python tests/editors/render_docs.py`"
    )


@pytest.mark.parametrize("doc", ["docs/editors.md", "README.md"])
@pytest.mark.parametrize("shipped", SHIPPED)
def test_doc_shows_shipped_file_verbatim(doc, shipped):
    if doc == "README.md":
        path, text = editors_doc()
        assert path == README, "README.md has no editors section between <!-- editors:begin/end -->"
    else:
        text = EDITORS_DOC.read_text(encoding="utf-8")
    content = (REPO / shipped).read_text(encoding="utf-8")
    assert content in code_blocks(text), f"{doc} does not show {shipped} verbatim in a code block"
    assert shipped in text, f"{doc} does not name {shipped}"


def test_every_shipped_editor_file_is_documented():
    on_disk = sorted(str(p.relative_to(REPO)) for p in EDITORS.rglob("*") if p.suffix in (".lua", ".el"))
    assert on_disk == sorted(SHIPPED)
