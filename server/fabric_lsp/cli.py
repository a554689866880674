"""Command line: ``fabric-lsp [serve]`` runs the language server, ``fabric-lsp check`` lints."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Iterable, Optional

from fabric_lsp import __version__
from fabric_lsp.output import FORMATS

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

    rule = sub.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code")
    sub.add_parser("rules", help="list the rules")
    return p


def _serve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stdio", action="store_true", help="talk LSP on stdin/stdout (the default)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead of stdio")
    p.add_argument("--log-file", help="also write the server's log to this file")


def main(argv: Optional[list[str]] = None) -> int:
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
    from fabric_lsp.server import run

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

    for rule in ALL_RULES:
        fix = "fix" if rule.fixable else "   "
        print(f"{rule.code}  {fix}  {rule.name}: {rule.summary}")
    return EXIT_CLEAN


# -- check ---------------------------------------------------------------------------------------

#: Always skipped when walking folders, whatever ``exclude`` says.
ALWAYS_SKIP = frozenset({".git", ".hg", ".svn"})
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
    config: object  # fabric_lsp.config.Config


@dataclass(frozen=True)
class Mode:
    fix: bool = False
    diff: bool = False
    unsafe: bool = False


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def discover(paths: Iterable[str], resolver, report, *, force_exclude: bool = False, respect_gitignore: bool = True) -> list[Task]:
    """The Python files to check under ``paths``, each with its configuration.

    Folders are walked recursively (``*.py``, ``*.pyi``), skipping what ``exclude`` /
    ``extend-exclude`` and (unless disabled) ``.gitignore`` say. A path named on the command line
    is always checked unless ``--force-exclude`` is given (what the pre-commit hook passes).
    """
    from fabric_lsp.config import GitIgnore

    tasks: list[Task] = []
    seen: set[str] = set()

    def add(path: str, config) -> None:
        if path not in seen:
            seen.add(path)
            tasks.append(Task(path, _display(path), config))

    for raw in paths:
        path = os.path.abspath(raw)
        if os.path.isfile(path):
            config = resolver.for_path(path)
            if force_exclude and config.is_excluded(path):
                report.problems.append(f"{_display(path)}: note: excluded by `exclude` ({config.source or 'the default excludes'})")
                continue
            add(path, config)
        elif os.path.isdir(path):
            if force_exclude and resolver.for_path(os.path.dirname(path)).is_excluded(path, is_dir=True):
                continue
            gitignore = GitIgnore(path) if respect_gitignore else None
            anchors: dict = {}

            def excluded(entry: str, is_dir: bool, config) -> bool:
                # Patterns are relative to the configuration's folder; but a folder named on the
                # command line is never excluded by its own name or its parents' (ruff does the same).
                root = config.root
                if root is None or _under(path, root):
                    key = (config.source, path)
                    if key not in anchors:
                        anchors[key] = root is None or config.is_excluded(path, is_dir=True, root=root)
                    if anchors[key]:
                        root = path
                return config.is_excluded(entry, is_dir=is_dir, root=root)

            seen_dirs: set[str] = set()
            for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
                real = os.path.realpath(dirpath)
                if real in seen_dirs:
                    dirnames[:] = []
                    continue
                seen_dirs.add(real)
                config = resolver.for_path(dirpath)
                keep = []
                for d in sorted(dirnames):
                    full = os.path.join(dirpath, d)
                    if d in ALWAYS_SKIP or excluded(full, True, config):
                        continue
                    if gitignore is not None and gitignore.ignored(full, is_dir=True):
                        continue
                    keep.append(d)
                dirnames[:] = keep
                for f in sorted(filenames):
                    if not f.endswith((".py", ".pyi")):
                        continue
                    full = os.path.join(dirpath, f)
                    if excluded(full, False, config):
                        continue
                    if gitignore is not None and gitignore.ignored(full):
                        continue
                    add(full, config)
        else:
            report.problems.append(f"{raw}: error: no such file or directory")
    return tasks


def read_source(path: str) -> tuple[Optional[str], Optional[str], bool]:
    """(text, problem, had_bom)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}", False
    return decode_source(data)


def decode_source(data: bytes) -> tuple[Optional[str], Optional[str], bool]:
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
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _display(path: str) -> str:
    from fabric_lsp.output import display_path

    return display_path(path)


def _inference_root(paths: list[str], explicit: Optional[str]) -> str:
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


def _init_state(root: str, environment: Optional[str]) -> None:
    from fabric_lsp.engine.workspace import Workspace

    debug = bool(os.environ.get("FABRIC_LSP_DEBUG"))
    _STATE.clear()
    _STATE["workspace"] = Workspace(root, environment)
    _STATE["analyzers"] = {}
    _STATE["log"] = (lambda m: print(m, file=sys.stderr)) if debug else (lambda m: None)


def _analyzer(config):
    from fabric_lsp.engine import Analyzer

    rules = config.enabled_rules()
    key = (tuple(r.code for r in rules), bool(config.report_unknown))
    analyzer = _STATE["analyzers"].get(key)
    if analyzer is None:
        analyzer = _STATE["analyzers"][key] = Analyzer(
            _STATE["workspace"], rules=rules, log=_STATE["log"], report_unknown=bool(config.report_unknown)
        )
    return analyzer


def check_text(text: str, path: Optional[str], shown: str, config, mode: Mode, bom: bool = False, write: bool = True):
    """Check (and with ``mode.fix`` fix) one source text; returns a FileResult."""
    from fabric_lsp.engine.fixer import fix_text
    from fabric_lsp.output import FileResult

    result = FileResult(path or "-", shown, text=text, checked=True)
    if text.strip() == "":
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
                    if write:
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


def _check_task(task: Task, mode: Mode):
    from fabric_lsp.output import FileResult

    text, problem, bom = read_source(task.path)
    if problem:
        return FileResult(task.path, task.shown, problems=[f"{task.shown}: error: {problem}"])
    return check_text(text, task.path, task.shown, task.config, mode, bom)


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


def _may_have_findings(text: str) -> bool:
    """The engine's cheap pre-filter: a file it would dismiss unparsed is not worth a worker."""
    from fabric_lsp.engine import analyzer

    prefilter = getattr(analyzer, "PREFILTER", None)
    return prefilter is None or bool(prefilter.search(text))


def run_tasks(tasks: list[Task], mode: Mode, root: str, environment: Optional[str], jobs: int) -> list:
    """Check every task; results in task order.

    Files are read here first: the ones the engine's pre-filter dismisses (most files of a
    project) are done at once, and only the rest is spread over ``jobs`` worker processes, when
    there are enough of them to pay for starting the workers.
    """
    from fabric_lsp.output import FileResult

    bar = _progress(len(tasks))
    _init_state(root, environment)
    results: list = [None] * len(tasks)
    candidates: list[int] = []
    try:
        for i, t in enumerate(tasks):
            text, problem, bom = read_source(t.path)
            if problem:
                results[i] = FileResult(t.path, t.shown, problems=[f"{t.shown}: error: {problem}"])
            elif _may_have_findings(text):
                candidates.append(i)
                continue
            else:
                results[i] = check_text(text, t.path, t.shown, t.config, mode, bom)
            if bar is not None:
                bar.update(1)
        jobs = max(1, min(jobs, len(candidates)))
        done = None
        if jobs > 1 and len(candidates) >= MIN_FILES_FOR_POOL:
            done = _run_pool([tasks[i] for i in candidates], mode, root, environment, jobs, bar)
        if done is None:
            done = []
            for i in candidates:
                done.append(_check_task(tasks[i], mode))
                if bar is not None:
                    bar.update(1)
        for i, r in zip(candidates, done):
            results[i] = r
        return results
    finally:
        if bar is not None:
            bar.close()


def _run_pool(tasks: list[Task], mode: Mode, root: str, environment: Optional[str], jobs: int, bar) -> Optional[list]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # fork is cheap (the engine is already imported) and safe here: the CLI runs no threads.
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "fork":
        try:  # imported once here, inherited by every worker (half a second each otherwise)
            import jedi  # noqa: F401

            import fabric_lsp.engine.infer  # noqa: F401
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


def _write_output(text: str, output_file: Optional[str]) -> Optional[str]:
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


def check_command(args) -> int:
    from fabric_lsp.config import Resolver
    from fabric_lsp.output import Report, render

    paths: list[str] = list(args.paths)
    if "-" in paths and len(paths) > 1:
        print("fabric-lsp: error: `-` (standard input) cannot be combined with other paths", file=sys.stderr)
        return EXIT_ERROR
    stdin = paths == ["-"] or (not paths and args.stdin_filename is not None)
    if not paths:
        paths = ["."]
    if args.jobs is not None and args.jobs < 1:
        print(f"fabric-lsp: error: --jobs must be at least 1, got {args.jobs}", file=sys.stderr)
        return EXIT_ERROR
    if stdin and args.fix and args.diff:
        print("fabric-lsp: error: --fix and --diff cannot be combined on standard input", file=sys.stderr)
        return EXIT_ERROR

    resolver = Resolver(environment_path=args.environment)
    report = Report()
    mode = Mode(fix=args.fix and not args.diff, diff=args.diff, unsafe=args.unsafe_fixes)
    stdin_filename = os.path.abspath(args.stdin_filename) if args.stdin_filename else None
    root = _inference_root([stdin_filename] if stdin and stdin_filename else ([] if stdin else paths), args.root)

    if args.show_settings:
        target = stdin_filename or os.path.abspath(paths[0])
        config = resolver.for_path(target)
        for p in resolver.drain_problems():
            print(f"fabric-lsp: warning: {p}", file=sys.stderr)
        shown = json.dumps({"path": _display(target), **config.describe()}, indent=2) + "\n"
        err = _write_output(shown, args.output_file)
        if err:
            print(err, file=sys.stderr)
            return EXIT_ERROR
        return EXIT_CLEAN

    n_inputs = 0
    if stdin:
        n_inputs = 1
        shown = _display(stdin_filename) if stdin_filename else "-"
        config = resolver.for_path(stdin_filename or os.path.join(os.getcwd(), "-"))
        if args.force_exclude and stdin_filename and config.is_excluded(stdin_filename):
            result = None
            if mode.fix:  # pass the source through unchanged, as a formatter would
                sys.stdout.write(sys.stdin.read())
            n_inputs = 0
        else:
            text, problem, bom = decode_source(sys.stdin.buffer.read())
            if problem:
                from fabric_lsp.output import FileResult

                result = FileResult(stdin_filename or "-", shown, problems=[f"{shown}: error: {problem}"])
            else:
                _init_state(root, args.environment)
                result = check_text(text, stdin_filename, shown, config, mode, bom, write=False)
        if result is not None:
            report.results.append(result)
    else:
        tasks = discover(paths, resolver, report, force_exclude=args.force_exclude, respect_gitignore=not args.no_respect_gitignore)
        n_inputs = len(tasks)
        if tasks:
            jobs = args.jobs or default_jobs()
            report.results.extend(run_tasks(tasks, mode, root, args.environment, jobs))

    for p in resolver.drain_problems():
        print(f"fabric-lsp: warning: {p}", file=sys.stderr)
    for r in report.results:
        report.problems.extend(r.problems)
        report.checked += 1 if r.checked else 0
    for line in report.problems:
        print(line, file=sys.stderr)

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
    else:
        err = _write_output(output, args.output_file)
        if err:
            print(err, file=sys.stderr)
            return EXIT_ERROR

    if n_inputs and report.checked == 0:
        return EXIT_ERROR
    if any("no such file" in p for p in report.problems):
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    if args.diff:
        return EXIT_FINDINGS if any(r.diff for r in report.results) else EXIT_CLEAN
    return EXIT_FINDINGS if report.findings else EXIT_CLEAN
