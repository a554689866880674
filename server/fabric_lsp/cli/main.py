"""Command line: ``fabric-lsp [serve]`` runs the language server, ``fabric-lsp check`` lints."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabric_lsp import __version__
from fabric_lsp.cli.output import FORMATS

if TYPE_CHECKING:
    from fabric_lsp.config import Config, Resolver

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fabric-lsp",
        description="Catch Lightning Fabric setup misuse under DeepSpeed/XLA, in the editor (LSP) and in CI.",
    )
    p.add_argument("--version", action="version", version=f"fabric-lsp {__version__}")
    sub = p.add_subparsers(dest="command")

    serve = sub.add_parser("serve", help="run the language server (the default command)")
    _serve_args(serve)

    check = sub.add_parser(
        "check",
        help="check files and folders; exit 1 when something is found",
        description="Check Python files and folders. Settings come from [tool.fabric-lsp] in the closest pyproject.toml.",
    )
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .); `-` reads standard input")
    check.add_argument("--format", "--output-format", dest="format", choices=FORMATS, default="text", help="output format (default: text)")
    check.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE instead of standard output")
    check.add_argument("--statistics", action="store_true", help="print the number of findings per rule instead of the findings")
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place, then report what remains")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: also apply unsafe fixes")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    check.add_argument("--stdin-filename", metavar="PATH", help="the name of the file read from standard input (for messages and configuration)")
    check.add_argument("-j", "--jobs", type=int, metavar="N", help="check files in N processes (default: all cores)")
    check.add_argument("--force-exclude", action="store_true", help="apply `exclude` to paths named on the command line too (the pre-commit hook does)")
    check.add_argument("--no-respect-gitignore", action="store_true", help="also check files that .gitignore excludes")
    check.add_argument("--show-settings", action="store_true", help="print the configuration that applies to the first PATH, then exit")
    check.add_argument("--root", help="inference root for cross-module analysis (default: the current folder, or the paths' common folder)")
    check.add_argument("--environment", help="Python interpreter or virtualenv whose packages jedi analyses")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--add-noqa", action="store_true", help="add `# noqa: FABxxx` to the line of every current finding, then exit 0")
    check.add_argument("--show-files", action="store_true", help="print the files that would be checked, then exit")
    rules = check.add_argument_group("rule selection", "as ruff's: comma-separated codes or prefixes (FAB, FAB00, FAB001, ALL); repeatable")
    rules.add_argument("--select", action="append", metavar="CODES", help="the rules to run, instead of `select` in pyproject.toml")
    rules.add_argument("--extend-select", action="append", metavar="CODES", help="rules to run in addition to those selected")
    rules.add_argument("--ignore", action="append", metavar="CODES", help="rules not to run, in addition to `ignore` in pyproject.toml")

    rule = sub.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code")
    sub.add_parser("rules", help="list the rules")
    return p


def _serve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stdio", action="store_true", help="talk LSP on stdin/stdout (the default)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead of stdio")
    p.add_argument("--log-file", help="also write the server's log to this file")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("--") and argv[0] not in ("--help", "--version"):
        argv = ["serve", *argv]
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        if args.command in (None, "serve"):
            return _serve(args)
        if args.command == "check":
            return check_command(args)
        if args.command == "rule":
            return _rule(args.code)
        if args.command == "rules":
            return _rules()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    parser.print_help()
    return EXIT_ERROR


def _serve(args) -> int:
    from fabric_lsp.lsp.server import run

    tcp = getattr(args, "tcp", None)
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            print(f"fabric-lsp: error: --tcp takes HOST:PORT, got {tcp!r}", file=sys.stderr)
            return EXIT_ERROR
        return run(tcp=(host or "127.0.0.1", int(port)), log_file=getattr(args, "log_file", None))
    return run(log_file=getattr(args, "log_file", None))


def _rule(code: str) -> int:
    from fabric_lsp.rules import RULES_BY_CODE

    rule = RULES_BY_CODE.get(code.upper())
    if rule is None:
        print(f"fabric-lsp: error: unknown rule {code!r} (known: {', '.join(sorted(RULES_BY_CODE))})", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(rule.markdown())  # byte for byte docs/rules/<CODE>.md
    return EXIT_CLEAN


def _rules() -> int:
    from fabric_lsp.rules import ALL_RULES

    rows = [(r.code, "yes" if r.fixable else "no", r.name, r.summary) for r in ALL_RULES]
    widths = [max(len(row[i]) for row in [("code", "fix", "name", ""), *rows]) for i in range(3)]
    for row in [("code", "fix", "name", "summary"), *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + "  " + row[3])
    return EXIT_CLEAN


# -- check ---------------------------------------------------------------------------------------

#: Always skipped when walking folders, whatever ``exclude`` says.
ALWAYS_SKIP = frozenset({".git", ".hg", ".svn"})
#: The files a folder walk checks: Python files and Jupyter notebooks (as ruff's default include),
#: and batch-job scripts (``*.sh``, ``*.sbatch``, ``*.slurm``: FAB010 reports in them too).
SUFFIXES = (".py", ".pyi", ".ipynb", ".sh", ".sbatch", ".slurm")
#: A progress bar is shown (on a terminal) when more files than this are checked.
PROGRESS_THRESHOLD = 300
#: Fewer candidate files (files the engine's pre-filter keeps) than this are checked in-process:
#: starting workers (each with its own jedi) would cost more than it saves.
MIN_FILES_FOR_POOL = 24


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Task:
    path: str
    shown: str
    config: Config
    named: bool = False  # named on the command line (not found by walking a folder)


@dataclass(frozen=True)
class Mode:
    fix: bool = False
    diff: bool = False
    unsafe: bool = False


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Walk:
    """The Python files under one folder named on the command line, skipping what ``exclude`` /
    ``extend-exclude`` and (unless disabled) ``.gitignore`` say. The folder itself is never
    excluded by its own name or its parents' (ruff does the same)."""

    def __init__(self, top: str, resolver: Resolver, respect_gitignore: bool) -> None:
        from fabric_lsp.config import GitIgnore

        self.top = top
        self.resolver = resolver
        self.gitignore = GitIgnore(top) if respect_gitignore else None
        self.anchors: dict = {}

    def excluded(self, entry: str, is_dir: bool, config: Config) -> bool:
        # Patterns are relative to the configuration's folder; but when the named folder is
        # itself excluded there, they apply relative to the named folder instead.
        root = config.root
        if root is None or _under(self.top, root):
            key = (config.source, self.top)
            if key not in self.anchors:
                self.anchors[key] = root is None or config.is_excluded(self.top, is_dir=True, root=root)
            if self.anchors[key]:
                root = self.top
        if config.is_excluded(entry, is_dir=is_dir, root=root):
            return True
        return self.gitignore is not None and self.gitignore.ignored(entry, is_dir=is_dir)

    def files(self) -> Iterator[tuple[str, Config]]:
        seen_dirs: set[str] = set()
        for dirpath, dirnames, filenames in os.walk(self.top, followlinks=False):
            real = os.path.realpath(dirpath)
            if real in seen_dirs:
                dirnames[:] = []
                continue
            seen_dirs.add(real)
            config = self.resolver.for_path(dirpath)
            dirnames[:] = [
                d for d in sorted(dirnames) if d not in ALWAYS_SKIP and not self.excluded(os.path.join(dirpath, d), True, config)
            ]
            for f in sorted(filenames):
                full = os.path.join(dirpath, f)
                if f.endswith(SUFFIXES) and not self.excluded(full, False, config):
                    yield full, config.for_file(full)


def discover(paths: Iterable[str], resolver: Resolver, report, *, force_exclude: bool = False, respect_gitignore: bool = True) -> list[Task]:
    """The Python files to check under ``paths``, each with its configuration.

    Folders are walked recursively (``*.py``, ``*.pyi``, ``*.ipynb``). A path named on the command line is
    always checked unless ``--force-exclude`` is given (what the pre-commit hook passes).
    """
    tasks: dict[str, Task] = {}
    for raw in paths:
        path = os.path.abspath(raw)
        if os.path.isfile(path):
            config = resolver.for_file(path)
            if force_exclude and config.is_excluded(path):
                report.problems.append(f"{_display(path)}: note: excluded by `exclude` ({config.source or 'the default excludes'})")
            elif path not in tasks:
                tasks[path] = Task(path, _display(path), config, named=True)
        elif os.path.isdir(path):
            if force_exclude and resolver.for_path(os.path.dirname(path)).is_excluded(path, is_dir=True):
                continue
            for full, config in _Walk(path, resolver, respect_gitignore).files():
                tasks.setdefault(full, Task(full, _display(full), config))
        else:
            report.problems.append(f"{raw}: error: no such file or directory")
    return list(tasks.values())


def read_source(path: str) -> tuple[str | None, str | None, bool]:
    """(text, problem, had_bom)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}", False
    return decode_source(data)


def decode_source(data: bytes) -> tuple[str | None, str | None, bool]:
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); skipped", bom
    if "\x00" in text:
        return None, "contains NUL bytes; skipped", bom
    return text, None, bom


def write_atomic(path: str, text: str, bom: bool) -> None:
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".fabric-lsp-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        with contextlib.suppress(OSError):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _display(path: str) -> str:
    from fabric_lsp.cli.output import display_path

    return display_path(path)


def _inference_root(paths: list[str], explicit: str | None) -> str:
    if explicit:
        return os.path.abspath(explicit)
    cwd = os.getcwd()
    absolute = [os.path.abspath(p) for p in paths if p != "-"] or [cwd]
    if all(_under(p, cwd) for p in absolute):
        return cwd
    common = os.path.commonpath(absolute)
    return common if os.path.isdir(common) else os.path.dirname(common)


# Per-process state: each worker (and the main process, when checking in-process) builds its
# Workspace once and one Analyzer per distinct set of enabled rules.
_STATE: dict = {}


def _init_state(root: str, environment: str | None) -> None:
    from fabric_lsp.documents.analyzers import Analyzers
    from fabric_lsp.engine.workspace.workspace import Workspace

    debug = bool(os.environ.get("FABRIC_LSP_DEBUG"))
    _STATE.clear()
    _STATE["log"] = log = (lambda m: print(m, file=sys.stderr)) if debug else (lambda m: None)
    _STATE["analyzers"] = Analyzers(Workspace(root, environment), log)


def _analyzer(config):
    return _STATE["analyzers"].for_config(config)


def check_text(
    text: str, path: str | None, shown: str, config, mode: Mode, bom: bool = False, write: bool = True, named: bool = True
):
    """Check (and with ``mode.fix`` fix) one source text; returns a FileResult. An empty file
    gets a note only when it was ``named`` (on the command line, or standard input)."""
    from fabric_lsp.cli.notebooks import check_notebook, is_notebook
    from fabric_lsp.cli.output import FileResult
    from fabric_lsp.engine.fixer import fix_text
    from fabric_lsp.engine.program.batch_scripts import is_batch_script

    if is_notebook(path):
        return check_notebook(text, path, shown, config, mode, bom, write)
    if path is not None and is_batch_script(path):
        return check_batch_script(text, path, shown, config, mode, write)
    result = FileResult(path or "-", shown, text=text, checked=True)
    if text.strip() == "":
        if named:
            result.problems.append(f"{shown}: note: empty file, nothing to check")
        if not write and mode.fix:
            result.fixed_text = text
        return result
    analyzer = _analyzer(config)
    try:
        if mode.fix or mode.diff:
            fixed = fix_text(text, analyzer, path, unsafe=mode.unsafe)
            if not write and mode.fix:
                result.fixed_text = fixed.text
            if fixed.text != text:
                if mode.diff:
                    result.diff = "".join(
                        difflib.unified_diff(
                            text.splitlines(keepends=True),
                            fixed.text.splitlines(keepends=True),
                            fromfile=f"a/{shown}",
                            tofile=f"b/{shown}",
                        )
                    )
                else:
                    if write and path is not None:
                        write_atomic(path, fixed.text, bom)
                    result.fixed = fixed.applied
                    text = result.text = fixed.text
            findings = fixed.remaining if not mode.diff else analyzer.analyze(text, path)
        else:
            findings = analyzer.analyze(text, path)
    except Exception as exc:  # an internal error in one file is reported, the rest still checked
        result.problems.append(f"{shown}: error: internal error while checking ({type(exc).__name__}: {exc})")
        result.fixed_text = None if not mode.fix or write else text
        return result
    result.findings = config.apply(findings)
    return result


def check_batch_script(text: str, path: str, shown: str, config, mode: Mode, write: bool = True):
    """A batch-job script (``*.sh``, ``*.sbatch``, ``*.slurm``): the findings of the Python files it
    launches that concern it (FAB010), on its lines. A file the same run checks already carries
    the finding (with the script's line as related information) and is not repeated here. A shell
    script that launches no Python through SLURM, ``torchrun`` or ``fabric run`` is not counted as
    checked. Nothing is fixed in a script."""
    from fabric_lsp.cli.output import FileResult
    from fabric_lsp.engine.program.batch_scripts import parse, script_findings

    result = FileResult(path, shown, text=text, checked=parse(text, path) is not None)
    if mode.fix and not write:
        result.fixed_text = text
    if not result.checked:
        return result
    try:
        findings = script_findings(_analyzer(config), text, path, _STATE.get("also_checked", frozenset()))
    except Exception as exc:  # one script's internal error is reported, the rest still checked
        result.problems.append(f"{shown}: error: internal error while checking ({type(exc).__name__}: {exc})")
        return result
    result.findings = config.apply(findings)
    return result


def _check_task(task: Task, mode: Mode):
    from fabric_lsp.cli.output import FileResult

    text, problem, bom = read_source(task.path)
    if text is None:
        return FileResult(task.path, task.shown, problems=[f"{task.shown}: error: {problem}"])
    return check_text(text, task.path, task.shown, task.config, mode, bom, named=task.named)


def _check_chunk(args) -> list:
    tasks, mode = args
    return [_check_task(t, mode) for t in tasks]


def _progress(total: int):
    """A tqdm bar on stderr when it is a terminal and there are many files; else None."""
    if total <= PROGRESS_THRESHOLD or not sys.stderr.isatty() or os.environ.get("FABRIC_LSP_NO_PROGRESS"):
        return None
    try:
        import tqdm
    except ImportError:
        return None
    import shutil

    try:
        cols, rows = os.get_terminal_size(sys.stderr.fileno())
    except OSError:
        cols = rows = 0
    if cols <= 0 or rows <= 0:  # a terminal that reports no size (some CI ptys): tqdm would print nothing
        cols, rows = shutil.get_terminal_size((80, 24))
    tqdm.tqdm.monitor_interval = 0  # no monitor thread (workers are forked)
    return tqdm.tqdm(total=total, unit="file", desc="fabric-lsp", file=sys.stderr, leave=False, ncols=cols, nrows=rows or 24)


def _may_have_findings(text: str, config: Config) -> bool:
    """The rules' cheap prefilters: a file that no enabled rule would look at is not worth a worker."""
    return bool(_analyzer(config).matching(text))


def run_tasks(tasks: list[Task], mode: Mode, root: str, environment: str | None, jobs: int) -> list:
    """Check every task; results in task order.

    Files are read here first: the ones the engine's pre-filter dismisses (most files of a
    project) are done at once, and only the rest is spread over ``jobs`` worker processes, when
    there are enough of them to pay for starting the workers.
    """
    from fabric_lsp.cli.output import FileResult

    bar = _progress(len(tasks))
    _init_state(root, environment)
    # batch scripts are checked here, in this process: their findings are those of the Python
    # files they launch, reported there already when the run checks those files too
    _STATE["also_checked"] = frozenset(t.path for t in tasks if t.path.endswith((".py", ".pyi")))
    results: list = [None] * len(tasks)
    candidates: list[int] = []
    sources: dict[int, tuple[str, bool]] = {}  # the candidates' texts, for checking them in this process
    try:
        for i, t in enumerate(tasks):
            text, problem, bom = read_source(t.path)
            if text is None:
                results[i] = FileResult(t.path, t.shown, problems=[f"{t.shown}: error: {problem}"])
            elif _may_have_findings(text, t.config):
                candidates.append(i)
                sources[i] = (text, bom)
                continue
            else:
                results[i] = check_text(text, t.path, t.shown, t.config, mode, bom, named=t.named)
            if bar is not None:
                bar.update(1)
        jobs = max(1, min(jobs, len(candidates)))
        done = None
        if jobs > 1 and len(candidates) >= MIN_FILES_FOR_POOL:
            done = _run_pool([tasks[i] for i in candidates], mode, root, environment, jobs, bar)
        if done is None:
            done = []
            for i in candidates:
                text, bom = sources.pop(i)
                done.append(check_text(text, tasks[i].path, tasks[i].shown, tasks[i].config, mode, bom, named=tasks[i].named))
                if bar is not None:
                    bar.update(1)
        for i, r in zip(candidates, done):
            results[i] = r
        return results
    finally:
        if bar is not None:
            bar.close()


def _run_pool(tasks: list[Task], mode: Mode, root: str, environment: str | None, jobs: int, bar) -> list | None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # fork is cheap (the engine is already imported) and safe here: the CLI runs no threads.
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "fork":
        try:  # imported once here, inherited by every worker (half a second each otherwise)
            import jedi  # noqa: F401

            import fabric_lsp.engine.program.infer  # noqa: F401
            import fabric_lsp.rules  # noqa: F401
        except ImportError:
            pass
    # Small chunks keep the bar moving and the cores busy; big enough to amortise pickling.
    size = max(1, min(16, len(tasks) // (jobs * 4)))
    chunks = [(tasks[i : i + size], mode) for i in range(0, len(tasks), size)]
    results: list = []
    _STATE["log"](f"fabric-lsp: checking {len(tasks)} files in {jobs} worker processes")
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_state, initargs=(root, environment)) as pool:
            for chunk in pool.map(_check_chunk, chunks):
                results.extend(chunk)
                if bar is not None:
                    bar.update(len(chunk))
    except (BrokenProcessPool, OSError) as exc:
        print(f"fabric-lsp: warning: parallel check failed ({type(exc).__name__}: {exc}); checking in one process", file=sys.stderr)
        if bar is not None:
            bar.update(-len(results))
        return None
    return results


def _write_output(text: str, output_file: str | None) -> str | None:
    """Write the whole output; returns an error message instead of raising."""
    if output_file is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return None
    try:
        directory = os.path.dirname(os.path.abspath(output_file))
        os.makedirs(directory, exist_ok=True)
        with open(output_file, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:
        return f"fabric-lsp: error: cannot write {output_file}: {exc.strerror or exc}"
    return None


def _selection_layer(args) -> dict:
    """The command line's layer: --select / --extend-select / --ignore (comma-separated,
    repeatable) and --environment; raises ConfigError naming the flag."""
    from fabric_lsp.config import ConfigError, validate

    layer: dict = {"environment-path": args.environment} if args.environment else {}
    for name in ("select", "extend-select", "ignore"):
        given = getattr(args, name.replace("-", "_"))
        if given is None:
            continue
        codes = [c.strip() for arg in given for c in arg.split(",") if c.strip()]
        try:
            layer[name] = validate(name, codes)
        except ConfigError as exc:
            raise ConfigError(f"invalid value for --{name}: {exc}") from None
    return layer


def _usage_error(args) -> str | None:
    if "-" in args.paths and len(args.paths) > 1:
        return "`-` (standard input) cannot be combined with other paths"
    if args.jobs is not None and args.jobs < 1:
        return f"--jobs must be at least 1, got {args.jobs}"
    if _reads_stdin(args) and args.fix and args.diff:
        return "--fix and --diff cannot be combined on standard input"
    if args.add_noqa and (args.fix or args.diff or _reads_stdin(args)):
        return "--add-noqa edits the files it checks: it cannot be combined with --fix, --diff or standard input"
    return None


def _reads_stdin(args) -> bool:
    return args.paths == ["-"] or (not args.paths and args.stdin_filename is not None)


def _show_settings(args, resolver: Resolver, target: str) -> int:
    config = resolver.for_file(target)
    _warn_config_problems(resolver)
    shown = json.dumps({"path": _display(target), **config.describe()}, indent=2) + "\n"
    err = _write_output(shown, args.output_file)
    if err:
        print(err, file=sys.stderr)
        return EXIT_ERROR
    return EXIT_CLEAN


def _warn_config_problems(resolver: Resolver) -> None:
    for p in resolver.drain_problems():
        print(f"fabric-lsp: warning: {p}", file=sys.stderr)


def _check_stdin(args, resolver: Resolver, mode: Mode, root: str):
    """The FileResult of standard input, or None when ``--force-exclude`` excludes it."""
    from fabric_lsp.cli.output import FileResult

    filename = os.path.abspath(args.stdin_filename) if args.stdin_filename else None
    shown = _display(filename) if filename else "-"
    config = resolver.for_file(filename or os.path.join(os.getcwd(), "-"))
    if args.force_exclude and filename and config.is_excluded(filename):
        if mode.fix:  # pass the source through unchanged, as a formatter would
            sys.stdout.write(sys.stdin.read())
        return None
    text, problem, bom = decode_source(sys.stdin.buffer.read())
    if text is None:
        return FileResult(filename or "-", shown, problems=[f"{shown}: error: {problem}"])
    _init_state(root, args.environment)
    return check_text(text, filename, shown, config, mode, bom, write=False)


def _emit(args, report, mode: Mode, stdin: bool) -> str | None:
    """Write the report (and, for --fix on standard input, the fixed source); an error or None."""
    from fabric_lsp.cli.output import render

    fixed_stdin = stdin and mode.fix and report.results and report.results[0].fixed_text is not None
    if fixed_stdin:
        # ruff's convention: the fixed source on stdout, the report on stderr (or --output-file).
        sys.stdout.write(report.results[0].fixed_text)
        sys.stdout.flush()
    if args.diff:
        output = "".join(r.diff for r in report.results)
    else:
        to_terminal = args.output_file is None and (sys.stderr if fixed_stdin else sys.stdout).isatty()
        color = args.format == "text" and to_terminal and not os.environ.get("NO_COLOR")
        output = render(args.format, report, color=color, statistics=args.statistics)
    if fixed_stdin and args.output_file is None:
        sys.stderr.write(output)
        return None
    return _write_output(output, args.output_file)


def _exit_code(args, report, n_inputs: int) -> int:
    if n_inputs and report.checked == 0:
        return EXIT_ERROR
    if any("no such file" in p for p in report.problems):
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    if args.diff:
        return EXIT_FINDINGS if any(r.diff for r in report.results) else EXIT_CLEAN
    return EXIT_FINDINGS if report.findings else EXIT_CLEAN


def _show_files(args, tasks: list[Task], report) -> int:
    """``--show-files``: the files a check would read, one a line, sorted (as ruff's)."""
    for line in report.problems:
        print(line, file=sys.stderr)
    error = _write_output("".join(f"{t.shown}\n" for t in sorted(tasks, key=lambda t: t.shown)), args.output_file)
    if error:
        print(error, file=sys.stderr)
        return EXIT_ERROR
    return EXIT_CLEAN


def _add_noqa(report) -> int:
    from fabric_lsp.cli.add_noqa import add_noqa_to_results

    def write(path: str, text: str) -> None:
        with open(path, "rb") as fh:
            bom = fh.read(3) == b"\xef\xbb\xbf"
        write_atomic(path, text, bom)

    added, messages = add_noqa_to_results(report.results, write)
    for line in messages:
        print(line, file=sys.stderr)
    print(f"Added {added} noqa directive{'s' if added != 1 else ''}.", file=sys.stderr)
    return EXIT_CLEAN


def check_command(args) -> int:
    from fabric_lsp.cli.output import Report
    from fabric_lsp.config import ConfigError, Resolver

    error = _usage_error(args)
    try:
        layer = _selection_layer(args)
    except ConfigError as exc:
        error = error or str(exc)
    if error:
        print(f"fabric-lsp: error: {error}", file=sys.stderr)
        return EXIT_ERROR

    resolver = Resolver([layer])
    report = Report()
    mode = Mode(fix=args.fix and not args.diff, diff=args.diff, unsafe=args.unsafe_fixes)
    stdin = _reads_stdin(args)
    paths = [p for p in args.paths if p != "-"] or ([] if stdin else ["."])
    filename = os.path.abspath(args.stdin_filename) if args.stdin_filename else None
    root = _inference_root([filename] if stdin and filename else paths, args.root)
    if args.show_settings:
        return _show_settings(args, resolver, filename if stdin and filename else os.path.abspath((paths or ["."])[0]))

    if stdin:
        result = _check_stdin(args, resolver, mode, root)
        report.results.extend([result] if result is not None else [])
        n_inputs = len(report.results)
    else:
        tasks = discover(paths, resolver, report, force_exclude=args.force_exclude, respect_gitignore=not args.no_respect_gitignore)
        n_inputs = len(tasks)
        if args.show_files:
            return _show_files(args, tasks, report)
        if tasks:
            report.results.extend(run_tasks(tasks, mode, root, args.environment, args.jobs or default_jobs()))

    _warn_config_problems(resolver)
    for r in report.results:
        report.problems.extend(r.problems)
        report.checked += 1 if r.checked else 0
    for line in report.problems:
        print(line, file=sys.stderr)
    if args.add_noqa:
        return _add_noqa(report)
    error = _emit(args, report, mode, stdin)
    if error:
        print(error, file=sys.stderr)
        return EXIT_ERROR
    return _exit_code(args, report, n_inputs)
