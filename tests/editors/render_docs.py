"""Regenerate docs/editors.md from its template, inlining the shipped editor files verbatim.

    python tests/editors/render_docs.py          # rewrite docs/editors.md
    python tests/editors/render_docs.py --check  # exit 1 if docs/editors.md is stale

test_docs.py fails when docs/editors.md (or README.md's editors section, once merged) does not
show the files the editor tests load.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = Path(__file__).resolve().parent / "editors.md.in"
OUT = REPO / "docs" / "editors.md"


def render() -> str:
    text = TEMPLATE.read_text(encoding="utf-8")
    return re.sub(
        r"@@([^@\n]+)@@\n",
        lambda m: (REPO / m.group(1)).read_text(encoding="utf-8"),
        text,
    )


if __name__ == "__main__":
    new = render()
    if "--check" in sys.argv[1:]:
        sys.exit(0 if OUT.read_text(encoding="utf-8") == new else 1)
    OUT.write_text(new, encoding="utf-8")
