"""Runs the fabric-lsp server bundled with the VS Code extension.

The extension starts it as ``<interpreter> -I fabric_lsp_server.py``, with the interpreter the user
works with (Python 3.9 or newer). bundled/libs (fabric-lsp and its pure-Python dependencies, see
scripts/bundle_server.py) goes first on this process's sys.path only: PYTHONPATH is not touched, so
the interpreter's own environment, which jedi inspects in a subprocess, is analysed as it is.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs"))

from fabric_lsp.cli.main import main  # noqa: E402

sys.exit(main())
