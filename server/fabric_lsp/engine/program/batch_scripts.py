"""Batch-job scripts: which Python script a shell, SLURM or torchrun script launches, and what the
launched process finds in its environment.

* :func:`parse` — a script's ``#SBATCH`` options (read, as SLURM does, up to the first command) and its
  launch lines: ``python train.py``, ``srun python -m pkg.train``, ``torchrun ... train.py``,
  ``python -m torch.distributed.run ... train.py``, ``fabric run ... train.py`` (and
  ``lightning run model``), with the ``srun``/``torchrun``/``fabric run`` options written on the line.
  A script without ``#SBATCH`` lines, ``torchrun`` or ``fabric run`` is of no interest (None).
* :func:`environment` — the variables Lightning reads that the launch sets (SLURM's, torchelastic's,
  ``fabric run``'s ``LT_*``), each with the option it comes from. Values the script does not state
  (an absent ``--nodes``, ``--nproc-per-node=gpu``, a shell variable) are left out: never guessed.
* :func:`launches_of` — the launches in the workspace's batch scripts whose target is a given Python
  file (listing cached per workspace root for a few seconds, as ``launch.py``'s evidence search).
* the findings of a batch script itself (the CLI, an open script in the editor) are made by
  ``documents/check.py``: those of the Python files it launches that point into it, on its lines.

Rule-free: it answers what a script says; comparing with a ``Fabric(...)`` is the rules' business.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from fabric_lsp import facts
from fabric_lsp.engine.findings import Span
from fabric_lsp.engine.workspace.dependencies import BATCH_SCRIPTS
from fabric_lsp.engine.workspace.files import project_files

if TYPE_CHECKING:
    from fabric_lsp.engine.workspace.workspace import Workspace

MAX_SCRIPTS = 200
MAX_DEPTH = 5
LISTING_TTL = 10.0
SEPARATORS = (";", "&&", "||", "|", "&", "(", ")")
WRAPPERS = ("exec", "time", "nohup", "command", "stdbuf")
PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
#: Characters the shell's quoting removes from a word (``p"y"thon`` is ``python``): a word of a
#: command is a substring of the command without them.
_QUOTING = str.maketrans("", "", "\"'\\")
#: A script none of whose words holds one of these launches nothing but Python: of no interest.
_LAUNCHER_WORDS = ("torchrun", *facts.TORCHRUN_MODULES, "fabric", "lightning")
#: A command none of whose words holds one of these neither launches nor changes folder.
_COMMAND_WORDS = ("py", "torchrun", "fabric", "lightning", "cd", "pushd")
#: srun options that take no value (the rest of the options seen before the program take one)
SRUN_FLAGS = ("-l", "--label", "-u", "--unbuffered", "--exclusive", "-K", "--kill-on-bad-exit", "-v", "--verbose")


@dataclass(frozen=True)
class ScriptOption:
    """An option as the script writes it: ``name`` is canonical (``facts.SLURM_OPTIONS`` …)."""

    name: str
    value: str
    line: int  # 0-based
    text: str  # the line, stripped


@dataclass(frozen=True)
class Launch:
    """A command line that runs a Python script."""

    line: int  # 0-based, first line of the command
    text: str  # the command, stripped (continuations joined)
    runner: str  # "python", "torchrun" or "fabric run"
    srun: bool  # prefixed by ``srun``
    target: str  # a path as written (``train.py``) or a module (``pkg.train``)
    module: bool
    options: tuple[ScriptOption, ...] = ()  # srun / torchrun / fabric run options on this line
    #: the folder an earlier ``cd`` moved to (relative to the script's folder, or absolute), if any
    directory: str | None = None

    def option(self, name: str) -> ScriptOption | None:
        return next((o for o in self.options if o.name == name), None)


@dataclass(frozen=True)
class BatchScript:
    path: str
    slurm: bool  # has ``#SBATCH`` lines
    sbatch: tuple[ScriptOption, ...]
    launches: tuple[Launch, ...]
    line_lengths: tuple[int, ...] = ()

    def sbatch_option(self, name: str) -> ScriptOption | None:
        found = [o for o in self.sbatch if o.name == name]
        return found[-1] if found else None  # a later #SBATCH line overrides an earlier one

    def slurm_option(self, launch: Launch, name: str) -> ScriptOption | None:
        """The option in effect for ``launch``: ``srun``'s own, else the ``#SBATCH`` one."""
        own = launch.option(name) if launch.srun else None
        return own or self.sbatch_option(name)

    def line_span(self, line: int) -> Span:
        """The span of a line's text (for related information and diagnostics in the script)."""
        length = self.line_lengths[line] if 0 <= line < len(self.line_lengths) else 0
        return Span.of(line, 0, line, length)


@dataclass(frozen=True)
class LaunchEnvironment:
    """What the launched process finds: variables (``env``) and the option each comes from."""

    env: tuple[tuple[str, str], ...]
    sources: tuple[tuple[str, ScriptOption], ...] = ()
    cluster: str = ""  # "SLURM", "torchrun" or "fabric run"; "" when none is detected

    def mapping(self) -> dict[str, str]:
        return dict(self.env)

    def source(self, variable: str) -> ScriptOption | None:
        return dict(self.sources).get(variable)


# -- parsing ------------------------------------------------------------------------------------
def parse(text: str, path: str) -> BatchScript | None:
    """The script's ``#SBATCH`` options and launch lines; None when it is not a batch script of
    interest (no ``#SBATCH``, no ``torchrun``/``fabric run`` launch)."""
    if "#SBATCH" not in text and not _holds_any(text, _LAUNCHER_WORDS):  # spares splitting each line
        return None
    lines = text.splitlines()
    sbatch: list[ScriptOption] = []
    launches: list[Launch] = []
    slurm = False
    commands_started = False
    directory: str | None = None
    for number, logical in _logical_lines(lines):
        stripped = logical.strip()
        if stripped.startswith("#SBATCH"):
            slurm = True
            if not commands_started:  # SLURM stops reading options at the first command
                sbatch += _options(_split(stripped[len("#SBATCH") :]), facts.SLURM_OPTIONS, number, stripped)
            continue
        if not stripped or stripped.startswith("#"):
            continue
        commands_started = True
        if _holds_any(stripped, _COMMAND_WORDS):
            found, directory = _launches(stripped, number, directory)
            launches += found
    if not slurm and not any(launch.runner != "python" for launch in launches):
        return None
    lengths = tuple(len(line) for line in lines)
    return BatchScript(path, slurm, tuple(sbatch), tuple(launches), lengths)


def _holds_any(text: str, words: tuple[str, ...]) -> bool:
    """Whether a word of the shell text ``text`` may hold one of ``words`` (quotes aside)."""
    unquoted = text.translate(_QUOTING)
    return any(word in unquoted for word in words)


def _logical_lines(lines: list[str]) -> list[tuple[int, str]]:
    """Lines with ``\\`` continuations joined, each with its first line's number."""
    out: list[tuple[int, str]] = []
    start, parts = 0, list[str]()
    for number, line in enumerate(lines):
        if not parts:
            start = number
        if line.rstrip().endswith("\\"):
            parts.append(line.rstrip()[:-1])
            continue
        parts.append(line)
        out.append((start, " ".join(parts)))
        parts = []
    if parts:
        out.append((start, " ".join(parts)))
    return out


def _split(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes
        return []


def _options(tokens: list[str], known: dict[str, str], line: int, text: str) -> list[ScriptOption]:
    """``--name=value``, ``--name value``, ``-Nvalue``, ``-N value`` for the options in ``known``."""
    out: list[ScriptOption] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, value, used = _option_at(tokens, i, known)
        if name is not None and value is not None:
            out.append(ScriptOption(name, value, line, text))
        i += used if token.startswith("-") else 1
    return out


def _option_at(tokens: list[str], i: int, known: dict[str, str]) -> tuple[str | None, str | None, int]:
    token = tokens[i]
    following = tokens[i + 1] if i + 1 < len(tokens) else None
    if "=" in token and token.startswith("--"):
        key, value = token.split("=", 1)
        return known.get(key), value, 1
    if token in known:
        return known[token], following, 2
    if len(token) > 2 and token[:2] in known and not token.startswith("--"):
        return known[token[:2]], token[2:], 1
    return None, None, 1


def _launches(command: str, line: int, directory: str | None) -> tuple[list[Launch], str | None]:
    """The launches on one command line, and the folder a ``cd`` on it moves to (a ``cd`` to a
    path with a variable or ``-`` forgets where the script is)."""
    tokens = _split(command)
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token in SEPARATORS or set(token) <= set(";&|()"):
            segments.append([])
        else:
            segments[-1].append(token)
    out = []
    for segment in segments:
        if segment[:1] in (["cd"], ["pushd"]):
            target = segment[1] if len(segment) > 1 else "$HOME"
            unknown = "$" in target or target.startswith(("~", "-"))
            directory = None if unknown else os.path.join(directory or "", target)
            continue
        launch = _launch(segment, line, command)
        if launch is not None:
            out.append(replace(launch, directory=directory))
    return out, directory


def _launch(tokens: list[str], line: int, text: str) -> Launch | None:
    tokens = _unwrapped(tokens)
    srun_options: list[ScriptOption] = []
    srun = bool(tokens) and os.path.basename(tokens[0]) == "srun"
    if srun:
        rest = _srun_program(tokens[1:])
        srun_options = _options(tokens[1 : len(tokens) - len(rest)], facts.SLURM_OPTIONS, line, text)
        tokens = _unwrapped(rest)
    if not tokens:
        return None
    program = os.path.basename(tokens[0])
    found: tuple[str, str, bool, list[ScriptOption]] | None = None
    if PYTHON.match(program):
        found = _python(tokens[1:], line, text)
    elif program.endswith(".py"):  # an executable script run directly (its shebang names Python)
        found = ("python", tokens[0], False, [])
    elif program == "torchrun":
        found = _torchrun(tokens[1:], line, text)
    elif program in ("fabric", "lightning") and tokens[1:2] == ["run"]:
        found = _fabric_run(tokens[2:], line, text)
    if found is None:
        return None
    runner, target, module, options = found
    return Launch(line, text, runner, srun, target, module, tuple(srun_options + options))


def _unwrapped(tokens: list[str]) -> list[str]:
    """Without leading ``VAR=value`` assignments and wrappers (``exec``, ``time``, ``env`` …)."""
    i = 0
    while i < len(tokens) and (ASSIGNMENT.match(tokens[i]) or tokens[i] in (*WRAPPERS, "env")):
        i += 1
    return tokens[i:]


def _srun_program(tokens: list[str]) -> list[str]:
    """The program and its arguments after ``srun``'s own options."""
    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):
        token = tokens[i]
        takes_value = "=" not in token and token not in SRUN_FLAGS and not (len(token) > 2 and token[1] != "-")
        i += 2 if takes_value and i + 1 < len(tokens) and not _is_program(tokens[i + 1]) else 1
    return tokens[i:]


def _is_program(token: str) -> bool:
    name = os.path.basename(token)
    return (
        bool(PYTHON.match(name)) or name in ("torchrun", "fabric", "lightning", "bash", "sh") or token.endswith(".py")
    )


def _python(tokens: list[str], line: int, text: str) -> tuple[str, str, bool, list[ScriptOption]] | None:
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "-m" and i + 1 < len(tokens):
            module = tokens[i + 1]
            if module in facts.TORCHRUN_MODULES:
                return _torchrun(tokens[i + 2 :], line, text)
            return "python", module, True, []
        if token == "-c":
            return None
        if not token.startswith("-"):
            return ("python", token, False, []) if token.endswith(".py") else None
        i += 2 if token in ("-W", "-X") else 1
    return None


def _torchrun(tokens: list[str], line: int, text: str) -> tuple[str, str, bool, list[ScriptOption]] | None:
    options: list[ScriptOption] = []
    module = False
    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):
        token = tokens[i]
        if token in facts.TORCHRUN_FLAGS:
            module = module or token in ("-m", "--module")
            if token == "--standalone":
                options.append(ScriptOption("standalone", "", line, text))
            i += 1
            continue
        name, value, used = _option_at(tokens, i, facts.TORCHRUN_OPTIONS)
        if name is not None and value is not None:
            options.append(ScriptOption(name, value, line, text))
        i += used if "=" in token else 2
    if i >= len(tokens):
        return None
    target = tokens[i]
    if not module and not target.endswith(".py"):
        return None
    return "torchrun", target, module, options


def _fabric_run(tokens: list[str], line: int, text: str) -> tuple[str, str, bool, list[ScriptOption]] | None:
    if tokens[:1] == ["model"]:  # ``lightning run model`` (and ``fabric run model`` of older releases)
        tokens = tokens[1:]
    options: list[ScriptOption] = []
    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):
        name, value, used = _option_at(tokens, i, facts.FABRIC_RUN_OPTIONS)
        if name is not None and value is not None:
            options.append(ScriptOption(name, value, line, text))
        i += used if "=" in tokens[i] else 2
    if i >= len(tokens) or not tokens[i].endswith(".py"):
        return None
    return "fabric run", tokens[i], False, options


# -- the environment ----------------------------------------------------------------------------
def _int(option: ScriptOption | None) -> int | None:
    if option is None:
        return None
    value = option.value.strip()
    return int(value) if value.isdigit() else None


def environment(script: BatchScript, launch: Launch) -> LaunchEnvironment:
    """The variables Lightning reads that ``launch`` sets, with the options they come from."""
    if launch.runner == "torchrun":
        return _torchrun_environment(launch)
    if launch.runner == "fabric run":
        return _fabric_run_environment(launch)
    if not script.slurm:
        return LaunchEnvironment(())
    return _slurm_environment(script, launch)


def _slurm_environment(script: BatchScript, launch: Launch) -> LaunchEnvironment:
    """SLURM's variables in the launched process (``sbatch``/``srun`` output environment): a step
    started by ``srun`` always has ``SLURM_NTASKS``; the batch step itself only when a task count
    was requested. ``SLURM_NTASKS_PER_NODE`` only when ``--ntasks-per-node`` is given."""
    env: dict[str, str] = {}
    sources: dict[str, ScriptOption] = {}
    name = script.slurm_option(launch, "job_name")
    if name is not None:
        env["SLURM_JOB_NAME"] = name.value
        sources["SLURM_JOB_NAME"] = name
    ntasks, per_node, nodes = (script.slurm_option(launch, n) for n in ("ntasks", "ntasks_per_node", "nodes"))
    tasks = _int(ntasks)
    if tasks is None and per_node is not None:
        count = _int(per_node)
        tasks = count * (_int(nodes) or 1) if count is not None and (nodes is None or _int(nodes)) else None
    if tasks is None and launch.srun and ntasks is None and per_node is None:
        tasks = _int(nodes) if nodes is not None else 1
    if tasks is not None:
        env[facts.SLURM_VARIABLE] = str(tasks)
        chosen = ntasks or per_node or nodes
        if chosen is not None:
            sources[facts.SLURM_VARIABLE] = chosen
    for variable, option in (("SLURM_NTASKS_PER_NODE", per_node), ("SLURM_NNODES", nodes)):
        if option is not None and _int(option) is not None:
            env[variable] = str(_int(option))
            sources[variable] = option
    detected = facts.SLURM_VARIABLE in env and env.get("SLURM_JOB_NAME") not in facts.SLURM_INTERACTIVE_JOB_NAMES
    return LaunchEnvironment(tuple(env.items()), tuple(sources.items()), "SLURM" if detected else "")


def _torchrun_environment(launch: Launch) -> LaunchEnvironment:
    env = {facts.TORCHELASTIC_VARIABLE: "fabric-lsp", "LOCAL_RANK": "0", "RANK": "0"}
    sources: dict[str, ScriptOption] = {}
    nproc_option = launch.option("nproc_per_node")
    nnodes_option = launch.option("nnodes")
    nproc = 1 if nproc_option is None else _int(nproc_option)
    nnodes = 1 if nnodes_option is None or launch.option("standalone") else _int(nnodes_option)
    if nproc is not None and nnodes is not None:
        env["WORLD_SIZE"] = str(nproc * nnodes)
        source = nproc_option or nnodes_option
        if source is not None:
            sources["WORLD_SIZE"] = source
    return LaunchEnvironment(tuple(env.items()), tuple(sources.items()), "torchrun")


def _fabric_run_environment(launch: Launch) -> LaunchEnvironment:
    """``cli.py:_set_env_variables`` and the ``torchrun`` it starts (``cli.py:_torchrun_launch``)."""
    env = {"LT_CLI_USED": "1", **facts.FABRIC_RUN_DEFAULTS}
    sources: dict[str, ScriptOption] = {}
    for option in launch.options:
        if option.name.startswith("LT_"):
            env[option.name] = option.value
            sources[option.name] = option
    env.update({facts.TORCHELASTIC_VARIABLE: "fabric-lsp", "LOCAL_RANK": "0", "RANK": "0"})
    devices, nodes = env["LT_DEVICES"], env["LT_NUM_NODES"]
    processes = 1 if env.get("LT_STRATEGY") == "dp" else (int(devices) if devices.isdigit() else None)
    if processes is not None and nodes.isdigit():
        env["WORLD_SIZE"] = str(processes * int(nodes))
    return LaunchEnvironment(tuple(env.items()), tuple(sources.items()), "fabric run")


# -- the workspace ------------------------------------------------------------------------------
_listing_cache: dict[str, tuple[float, list[str]]] = {}


def is_batch_script(path: str) -> bool:
    return path.lower().endswith(facts.BATCH_SCRIPT_SUFFIXES)


def script_paths(root: str) -> list[str]:
    """The batch-script files under ``root`` (cached for :data:`LISTING_TTL` seconds)."""
    now = time.monotonic()
    cached = _listing_cache.get(root)
    if cached is not None and now - cached[0] < LISTING_TTL:
        return cached[1]
    out = project_files(root, is_batch_script, MAX_SCRIPTS, MAX_DEPTH)
    _listing_cache[root] = (now, out)
    return out


def forget(root: str | None = None) -> None:
    """Drop the cached listing (tests; a server that saw a batch script appear)."""
    if root is None:
        _listing_cache.clear()
    else:
        _listing_cache.pop(root, None)


#: path → (text, what it parses to): a script is parsed again only when its text changed
_parsed: dict[str, tuple[str, BatchScript | None]] = {}
MAX_PARSED = 1000


def parsed(text: str, path: str) -> BatchScript | None:
    """:func:`parse`, cached per path and text."""
    cached = _parsed.get(path)
    if cached is not None and cached[0] == text:
        return cached[1]
    script = parse(text, path)
    if len(_parsed) >= MAX_PARSED:
        _parsed.clear()
    _parsed[path] = (text, script)
    return script


def scripts(workspace: Workspace) -> list[BatchScript]:
    """The workspace's batch scripts of interest (editor buffers take precedence over files)."""
    if not workspace.root:
        return []
    workspace.record_listing(BATCH_SCRIPTS)
    out = []
    for path in script_paths(workspace.root):
        text = workspace.text_of(path)
        script = parsed(text, path) if text is not None else None
        if script is not None:
            out.append(script)
    return out


def launches_of(workspace: Workspace, python_path: str) -> list[tuple[BatchScript, Launch]]:
    """The launches in the workspace's batch scripts that run ``python_path``."""
    found = []
    for script in scripts(workspace):
        for launch in script.launches:
            if targets(script, launch, python_path, workspace.root):
                found.append((script, launch))
    return found


def targets(script: BatchScript, launch: Launch, python_path: str, root: str | None) -> bool:
    """Whether ``launch`` runs ``python_path``: the target read from the script's folder or the
    workspace root, else (when neither exists) the target's trailing path components. A target
    under a variable or an absolute path (``$HOME/project/src/train.py``) names another machine's
    folder: its trailing components (at least the file and its folder) are looked up instead."""
    wanted = os.path.normcase(os.path.abspath(python_path))
    parts, prefixed = _relative_target(launch)
    if not parts:
        return False
    bases = [os.path.dirname(script.path)] + ([root] if root else [])
    if launch.directory is not None:  # after a ``cd``: relative to that folder first
        bases = [os.path.join(base, launch.directory) for base in bases] + bases
    tails = [parts[i:] for i in range(len(parts) - 1)] if prefixed and len(parts) > 1 else [parts]
    for tail in tails:
        relative = os.path.join(*tail)
        candidates = [relative] if not launch.module else [relative + ".py", os.path.join(relative, "__main__.py")]
        paths = [os.path.normcase(os.path.abspath(os.path.join(b, c))) for b in bases for c in candidates]
        if wanted in paths:
            return True
        if any(os.path.exists(p) for p in paths):
            return False
    if len(tails[0]) < 2:  # a bare file name found nowhere: any file of that name would match
        return False
    relative = os.path.join(*tails[0])
    candidates = [relative] if not launch.module else [relative + ".py", os.path.join(relative, "__main__.py")]
    return any(wanted.endswith(os.sep + os.path.normcase(os.path.normpath(c))) for c in candidates)


def _relative_target(launch: Launch) -> tuple[list[str], bool]:
    """The target's path components without variables, ``~`` or ``..`` prefixes, and whether
    there was such a prefix (or the path is absolute); no components when a variable is inside."""
    target = launch.target.replace(".", "/") if launch.module else launch.target
    prefixed = target.startswith(("/", "~", "$"))
    parts = [p for p in re.split(r"[/\\]", target) if p not in ("", ".")]
    while parts and ("$" in parts[0] or parts[0].startswith("~") or parts[0] == ".."):
        prefixed = prefixed or parts[0] != ".."
        parts = parts[1:]
    if not parts or any("$" in p for p in parts):
        return [], prefixed
    return parts, prefixed


# -- findings in the script itself --------------------------------------------------------------
def launched_files(workspace: Workspace, script: BatchScript) -> list[str]:
    """The workspace's Python files ``script`` launches, in launch order."""
    out: list[str] = []
    files = workspace.python_files()
    for launch in script.launches:
        parts, _ = _relative_target(launch)
        if not parts:
            continue
        name = parts[-1] if not launch.module else None
        for path in files:  # the file name first: most files are not the target
            if name is not None and os.path.basename(path) != name:
                continue
            if path not in out and targets(script, launch, path, workspace.root):
                out.append(path)
    return out
