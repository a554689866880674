"""Command line: ``fabric-lsp [serve]`` runs the language server, ``fabric-lsp check`` lints."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, NamedTuple

from fabric_lsp import __version__, generated_code
from fabric_lsp.cli import FORMATS

if TYPE_CHECKING:
    import argparse

    from fabric_lsp.cli.checks import Mode
    from fabric_lsp.cli.discover import Task
    from fabric_lsp.cli.replay import Recording
    from fabric_lsp.config import Resolver

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    import argparse  # after a check's replay, which does without it

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
    check.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders (default: .); `-` reads standard input"
    )
    check.add_argument(
        "--format",
        "--output-format",
        dest="format",
        choices=FORMATS,
        default="text",
        help="output format (default: text)",
    )
    check.add_argument(
        "-o", "--output-file", metavar="FILE", help="write the report to FILE instead of standard output"
    )
    check.add_argument(
        "--statistics", action="store_true", help="print the number of findings per rule instead of the findings"
    )
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place, then report what remains")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: also apply unsafe fixes")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    check.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="the name of the file read from standard input (for messages and configuration)",
    )
    check.add_argument("-j", "--jobs", type=int, metavar="N", help="check files in N processes (default: all cores)")
    check.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply `exclude` to paths named on the command line too (the pre-commit hook does)",
    )
    check.add_argument("--no-respect-gitignore", action="store_true", help="also check files that .gitignore excludes")
    check.add_argument(
        "--show-settings", action="store_true", help="print the configuration that applies to the first PATH, then exit"
    )
    check.add_argument(
        "--root",
        help="inference root for cross-module analysis (default: the current folder, or the paths' common folder)",
    )
    check.add_argument("--environment", help="Python interpreter or virtualenv whose packages jedi analyses")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument(
        "--add-noqa", action="store_true", help="add `# noqa: FABxxx` to the line of every current finding, then exit 0"
    )
    check.add_argument("--show-files", action="store_true", help="print the files that would be checked, then exit")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    check.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where to keep the cache (default: `cache-dir`, else .fabric_lsp_cache in the project root)",
    )
    rules = check.add_argument_group(
        "rule selection", "as ruff's: comma-separated codes or prefixes (FAB, FAB00, FAB001, ALL); repeatable"
    )
    rules.add_argument(
        "--select", action="append", metavar="CODES", help="the rules to run, instead of `select` in pyproject.toml"
    )
    rules.add_argument(
        "--extend-select", action="append", metavar="CODES", help="rules to run in addition to those selected"
    )
    rules.add_argument(
        "--ignore", action="append", metavar="CODES", help="rules not to run, in addition to `ignore` in pyproject.toml"
    )

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
    recording = None
    if argv[0] == "check":
        from fabric_lsp.cli import replay

        try:
            status = replay.replayed(argv)
        except BrokenPipeError:
            return EXIT_CLEAN
        if status is not None:  # nothing the same check read has changed: what it printed
            return status
        recording = replay.Recording(argv) if replay.eligible(argv) else None
    generated_code.cache_dataclasses()  # the methods of each dataclass defined from here on: compiled once
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        if recording is not None:
            recording.close()
        return int(exc.code or 0)
    try:
        if args.command in (None, "serve"):
            return _serve(args)
        if args.command == "check":
            return check_command(args, recording)
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


def run() -> None:
    """The ``fabric-lsp`` process: :func:`main` on its arguments, then gone as soon as its output
    and its log are flushed, without tearing its heap down (every parsed file, result and
    protocol class freed one by one: ~20 ms at the end of litgpt's check, as long as the
    check's own tail), as mypy does. Nothing of fabric-lsp waits to run at exit: a check's forker
    and workers are gone, and the server has answered ``exit`` (its cache is saved with each
    workspace report, atomically); its worker processes end when their pipes close."""
    code = main(sys.argv[1:])
    generated_code.save()
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe: what was written is what there is
            stream.flush()
    os._exit(code)


def _serve(args) -> int:
    from fabric_lsp.documents import workers

    several = workers.cores() > 1
    tcp = getattr(args, "tcp", None)
    head = None
    stdin = getattr(sys.stdin, "buffer", None)
    if several and not tcp and stdin is not None:  # the workers analyse the project while this imports the protocol
        from fabric_lsp.lsp import head_start

        head = head_start.begin(stdin)  # its workers are forked from here, not from the fork server
    elif several:  # the workers' fork server imports the engine while this process imports the protocol
        with contextlib.suppress(OSError):
            workers.prestart()
    from fabric_lsp.lsp import protocol_import

    protocol_import.import_types()  # attrs' code for the protocol's classes, cached as bytecode is
    from fabric_lsp.lsp.server import run

    generated_code.save()  # now: a server is often stopped without running to its end
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            print(f"fabric-lsp: error: --tcp takes HOST:PORT, got {tcp!r}", file=sys.stderr)
            return EXIT_ERROR
        return run(tcp=(host or "127.0.0.1", int(port)), log_file=getattr(args, "log_file", None))
    return run(log_file=getattr(args, "log_file", None), head=head)


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


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _inference_root(paths: list[str], explicit: str | None) -> str:
    from fabric_lsp.cli.discover import under

    if explicit:
        return os.path.abspath(explicit)
    cwd = os.getcwd()
    absolute = [os.path.abspath(p) for p in paths if p != "-"] or [cwd]
    if all(under(p, cwd) for p in absolute):
        return cwd
    common = os.path.commonpath(absolute)
    return common if os.path.isdir(common) else os.path.dirname(common)


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
    import json

    from fabric_lsp.cli.discover import display

    config = resolver.for_file(target)
    _warn_config_problems(resolver)
    shown = json.dumps({"path": display(target), **config.describe()}, indent=2) + "\n"
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
    from fabric_lsp.cli.checks import check_text, init_state
    from fabric_lsp.cli.discover import display
    from fabric_lsp.cli.files import decode_source
    from fabric_lsp.cli.output import FileResult

    filename = os.path.abspath(args.stdin_filename) if args.stdin_filename else None
    shown = display(filename) if filename else "-"
    config = resolver.for_file(filename or os.path.join(os.getcwd(), "-"))
    if args.force_exclude and filename and config.is_excluded(filename):
        if mode.fix:  # pass the source through unchanged, as a formatter would
            sys.stdout.write(sys.stdin.read())
        return None
    text, problem, bom = decode_source(sys.stdin.buffer.read())
    if text is None:
        return FileResult(filename or "-", shown, problems=[f"{shown}: error: {problem}"])
    init_state(root, args.environment)
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


#: what a run that found nothing to check says (as ruff's "No Python files found")
NOTHING_TO_CHECK = (
    "fabric-lsp: warning: nothing to check under the given path(s): no Python file, notebook, or "
    "batch script that launches Python (through SLURM, torchrun or fabric run)"
)


def _exit_code(args, report, n_inputs: int) -> int:
    if n_inputs and report.checked == 0 and report.problems:  # nothing read: each input says why
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
    from fabric_lsp.cli.files import write_atomic

    def write(path: str, text: str) -> None:
        with open(path, "rb") as fh:
            bom = fh.read(3) == b"\xef\xbb\xbf"
        write_atomic(path, text, bom)

    added, messages = add_noqa_to_results(report.results, write)
    for line in messages:
        print(line, file=sys.stderr)
    print(f"Added {added} noqa directive{'s' if added != 1 else ''}.", file=sys.stderr)
    return EXIT_CLEAN


#: a check whose root holds more folders than this (a home folder …) is not recorded
MAX_REPLAYED_FOLDERS = 5000


def _replayable(cache, resolver: Resolver, root: str, args, walked: list[str]) -> Replay | None:
    """What a check that used ``cache`` read, for its run record; None where it cannot be
    replayed: it analysed for another interpreter (whose states are not recorded), or its root is
    too big to look over quickly. The folders its walk entered (``walked``), those the engine
    lists and those of the configuration files (where the declared Lightning version is read
    too), and the modules every entry's analysis read."""
    from fabric_lsp.engine.workspace.files import analysed_environment, project_folders

    if cache is None or analysed_environment(root, args.environment) is not None:
        return None
    listed: list[str] = []
    for folder, _ in project_folders(root):
        listed.append(folder)
        if len(listed) > MAX_REPLAYED_FOLDERS:  # a root too big to look over quickly
            return None
    named = [os.path.dirname(os.path.abspath(p)) for p in args.paths if not os.path.isdir(p)]  # a file appearing
    folders = [*walked, *listed, *resolver.config_folders(), *named]
    inside = os.path.join(cache.directory, "")
    return Replay(
        folders=sorted({f for f in folders if not os.path.join(f, "").startswith(inside)}),
        paths={p for entry in cache.entries.values() for p in entry.deps.paths},
        written={cache.path},  # its entries, saved: a run after the cache is removed is cold
    )


def _cache(args, resolver: Resolver, mode: Mode, root: str):
    """The run's cache: none with ``--no-cache`` or while fixing (a fixed file is re-read anyway)."""
    from fabric_lsp.documents.cache import Cache, cache_directory

    if args.no_cache or mode.fix or mode.diff or args.add_noqa:
        return None
    directory = os.path.abspath(args.cache_dir) if args.cache_dir is not None else None
    return Cache(directory or cache_directory(resolver.for_path(root), root), root, args.environment)


def check_command(args, recording: Recording | None = None) -> int:
    """Run ``fabric-lsp check``; where it is recorded (:mod:`fabric_lsp.cli.replay`), keep the
    record when the run used the cache and the default environment and nothing went wrong."""
    try:
        status, replay = _check_command(args, recorded=recording is not None)
    finally:
        if recording is not None:
            recording.close()
    if recording is None or replay is None:
        return status
    if status in (EXIT_CLEAN, EXIT_FINDINGS) and not recording.went_wrong():
        recording.keep(status, replay.folders, replay.paths, replay.written)
    return status


class Replay(NamedTuple):
    """What a check read that its run record keeps: the folders it listed, the modules its
    analyses read, the files it wrote (the cache)."""

    folders: list[str]
    paths: set[str]
    written: set[str]


def _check_command(args, recorded: bool) -> tuple[int, Replay | None]:
    """The check's exit status, and what its run record keeps where it was ``recorded`` and can be
    replayed."""
    from fabric_lsp.cli.checks import Forker, Mode, run_tasks
    from fabric_lsp.cli.discover import discover
    from fabric_lsp.cli.output import Report
    from fabric_lsp.config import ConfigError, Resolver

    error = _usage_error(args)
    try:
        layer = _selection_layer(args)
    except ConfigError as exc:
        error = error or str(exc)
    if error:
        print(f"fabric-lsp: error: {error}", file=sys.stderr)
        return EXIT_ERROR, None

    report = Report()
    mode = Mode(fix=args.fix and not args.diff, diff=args.diff, unsafe=args.unsafe_fixes)
    stdin = _reads_stdin(args)
    paths = [p for p in args.paths if p != "-"] or ([] if stdin else ["."])
    filename = os.path.abspath(args.stdin_filename) if args.stdin_filename else None
    root = _inference_root([filename] if stdin and filename else paths, args.root)
    resolver = Resolver([layer], project_root=root)
    if args.show_settings:
        shown = filename if stdin and filename else os.path.abspath((paths or ["."])[0])
        return _show_settings(args, resolver, shown), None

    replay = None
    if stdin:
        result = _check_stdin(args, resolver, mode, root)
        report.results.extend([result] if result is not None else [])
        n_inputs = len(report.results)
    else:
        jobs = args.jobs or default_jobs()
        # it imports the engine and reads ahead meanwhile
        forker = Forker.start(root, args.environment) if jobs > 1 and not args.show_files else None
        try:
            cache = _cache(args, resolver, mode, root)  # before the walk: it knows the declared versions read before
            found = discover(
                paths,
                resolver,
                report,
                force_exclude=args.force_exclude,
                respect_gitignore=not args.no_respect_gitignore,
            )
            tasks = found.tasks
            n_inputs = len(tasks)
            if args.show_files:
                return _show_files(args, tasks, report), None
            if tasks:
                report.results.extend(run_tasks(tasks, mode, root, args.environment, jobs, cache, forker))
                if cache is not None:
                    cache.save()
                    if os.environ.get("FABRIC_LSP_DEBUG"):
                        print(f"fabric-lsp: {cache.hits} of {len(tasks)} files from the cache", file=sys.stderr)
        finally:
            if forker is not None:
                forker.close()
        replay = _replayable(cache, resolver, root, args, found.folders) if recorded else None

    _warn_config_problems(resolver)
    for r in report.results:
        report.problems.extend(r.problems)
        report.checked += 1 if r.checked else 0
    for line in report.problems:
        print(line, file=sys.stderr)
    if report.checked == 0 and not report.problems and not stdin:
        print(NOTHING_TO_CHECK, file=sys.stderr)
    if args.add_noqa:
        return _add_noqa(report), None
    error = _emit(args, report, mode, stdin)
    if error:
        print(error, file=sys.stderr)
        return EXIT_ERROR, None
    return _exit_code(args, report, n_inputs), replay
