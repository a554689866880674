"""A jedi environment for the running interpreter that starts no subprocess until one is needed.

``jedi.create_environment(sys.executable)`` starts a Python subprocess at once (a tenth of a second
or more, in every process that analyses) and sends it every module look-up. What a look-up does
there only reads files: it finds a module's source along ``sys.path``. This environment answers
``sys.path`` and those look-ups in the running process, as the subprocess would, and starts jedi's
subprocess only for what imports a module: a compiled extension, the members of a builtin object
(the evaluator asks jedi for the type of a receiver where Lightning can be inferred).

Only for the interpreter this process runs, and only where no other thread imports while a
look-up runs (jedi swaps ``sys.path`` for the look-up): the command line's processes.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

import parso.cache
from jedi.api.environment import SameEnvironment
from jedi.inference.compiled import subprocess as jedi_subprocess

from fabric_lsp.engine.workspace.module_finder import subprocess_sys_path

#: the functions of ``jedi.inference.compiled.subprocess.functions`` that only read files or
#: values: answered in this process
IN_PROCESS = frozenset(
    {"get_sys_path", "get_module_info", "iter_module_names", "get_builtin_module_names", "safe_literal_eval"}
)


def keep_parsed_modules() -> None:
    """A run is short: parso's parser cache (jedi's) throws away only the modules nobody used for
    ten minutes, and once it holds 600 it rebuilds itself at every module it adds to find that out
    (6 % of pytorch-lightning's check, whose receivers jedi infers through Lightning's own
    source). A run keeps what it parsed (parso's setting for this, raised)."""
    parso.cache._CACHED_SIZE_TRIGGER = sys.maxsize


def same_process_environment() -> LazySubprocessEnvironment | None:
    """The running interpreter as jedi's environment without its subprocess, or None where its
    ``sys.path`` is not known here (see :func:`subprocess_sys_path`)."""
    sys_path = subprocess_sys_path()
    return None if sys_path is None else LazySubprocessEnvironment(sys_path)


class LazySubprocessEnvironment(SameEnvironment):
    """The running interpreter as jedi's environment: ``sys.path`` and module look-ups here, the
    rest in jedi's subprocess, started at the first request that needs it."""

    def __init__(self, sys_path: list[str]) -> None:
        super().__init__()
        self._sys_path = sys_path

    def get_sys_path(self) -> list[str]:
        return list(self._sys_path)

    def get_inference_state_subprocess(self, inference_state: Any) -> Any:
        return _InferenceStateProcess(self, inference_state)


class _InferenceStateProcess:
    """One inference state's access to the interpreter: :data:`IN_PROCESS` functions run here,
    every other request (and the access handles it makes) goes to jedi's subprocess."""

    def __init__(self, environment: LazySubprocessEnvironment, inference_state: Any) -> None:
        self._environment = environment
        self._inference_state = weakref.ref(inference_state)
        self._same = jedi_subprocess.InferenceStateSameProcess(inference_state)
        self._subprocess: jedi_subprocess.InferenceStateSubprocess | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in IN_PROCESS:
            return getattr(self._same, name)
        if self._subprocess is None:
            process = self._environment._get_subprocess()
            self._subprocess = jedi_subprocess.InferenceStateSubprocess(self._inference_state(), process)
        return getattr(self._subprocess, name)
