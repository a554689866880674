"""jedi-language-server with its hard-wired 1 s diagnostics debounce set to 0.

jedi-language-server publishes diagnostics through ``@jedi_utils.debounce(1, keyed_by="uri")``
and has no setting for it. The benchmark measures every server with debounce 0 so that the edit
figures compare work, not timers; this launcher patches the decorator before the server module
is imported, then runs the ordinary CLI. Everything else is jedi-language-server as installed.
"""

import jedi_language_server.jedi_utils as jedi_utils

_debounce = jedi_utils.debounce


def _no_debounce(interval_s, keyed_by=None):
    return _debounce(0, keyed_by)


jedi_utils.debounce = _no_debounce

from jedi_language_server.cli import cli  # noqa: E402

if __name__ == "__main__":
    cli()
