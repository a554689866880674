"""Whether the test-suite runs under CI (``CI`` set to 1/true/yes/on): there, a test that needs a
tool (an editor, the runtime venv, the analysed Lightning environment) fails instead of skipping."""

from __future__ import annotations

import os


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on")
