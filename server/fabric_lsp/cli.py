"""Command line: ``fabric-lsp [serve]`` runs the language server, ``fabric-lsp check`` lints."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Iterable, Optional

from fabric_lsp import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "node_modules", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages"})


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fabric-lsp",
        description="Catch Lightning Fabric setup misuse under DeepSpeed/XLA, in the editor (LSP) and in CI.",
    )
    p.add_argument("--version", action="version", version=f"fabric-lsp {__version__}")
    sub = p.add_subparsers(dest="command")

    serve = sub.add_parser("serve", help="run the language server (the default command)")
    _serve_args(serve)

    check = sub.add_parser("check", help="check files and folders; exit 1 when something is found")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or folders (default: .)")
    check.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place, then report what remains")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff: also apply unsafe fixes")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
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
    print(rule.markdown())
    return EXIT_CLEAN


def _rules() -> int:
    from fabric_lsp.rules import ALL_RULES

    for rule in ALL_RULES:
        fix = "fix" if rule.fixable else "   "
        print(f"{rule.code}  {fix}  {rule.name}: {rule.summary}")
    return EXIT_CLEAN


# -- check ---------------------------------------------------------------------------------------


@dataclass
class Report:
    results: list = field(default_factory=list)  # (display path, text, findings)
    problems: list[str] = field(default_factory=list)  # one-line messages about inputs
    checked: int = 0
    fixed: int = 0
    diffs: list[str] = field(default_factory=list)


def iter_python_files(paths: Iterable[str], report: Report) -> list[str]:
    files: list[str] = []
    for raw in paths:
        path = os.path.abspath(raw)
        if os.path.isfile(path):
            files.append(path)
        elif os.path.isdir(path):
            seen_dirs = set()
            for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
                real = os.path.realpath(dirpath)
                if real in seen_dirs:
                    dirnames[:] = []
                    continue
                seen_dirs.add(real)
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
                files.extend(os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith((".py", ".pyi")))
        else:
            report.problems.append(f"{raw}: error: no such file or directory")
    seen: set[str] = set()
    return [f for f in files if not (f in seen or seen.add(f))]


def read_source(path: str) -> tuple[Optional[str], Optional[str], bool]:
    """(text, problem, had_bom)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}", False
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
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _inference_root(paths: list[str], explicit: Optional[str]) -> str:
    if explicit:
        return os.path.abspath(explicit)
    cwd = os.getcwd()
    absolute = [os.path.abspath(p) for p in paths] or [cwd]
    if all(p == cwd or p.startswith(cwd + os.sep) for p in absolute):
        return cwd
    common = os.path.commonpath(absolute)
    return common if os.path.isdir(common) else os.path.dirname(common)


def check_command(args) -> int:
    from fabric_lsp.engine import Analyzer
    from fabric_lsp.engine.fixer import fix_text
    from fabric_lsp.engine.workspace import Workspace

    report = Report()
    files = iter_python_files(args.paths, report)
    root = _inference_root(args.paths, args.root)
    workspace = Workspace(root, args.environment)
    analyzer = Analyzer(workspace, log=lambda m: print(m, file=sys.stderr) if os.environ.get("FABRIC_LSP_DEBUG") else None)
    for path in files:
        text, problem, bom = read_source(path)
        shown = _display(path)
        if problem:
            report.problems.append(f"{shown}: error: {problem}")
            continue
        report.checked += 1
        if text.strip() == "":
            report.problems.append(f"{shown}: note: empty file, nothing to check")
            continue
        try:
            if args.fix or args.diff:
                result = fix_text(text, analyzer, path, unsafe=args.unsafe_fixes)
                if result.text != text:
                    if args.diff:
                        report.diffs.append(
                            "".join(
                                difflib.unified_diff(
                                    text.splitlines(keepends=True),
                                    result.text.splitlines(keepends=True),
                                    fromfile=f"a/{shown}",
                                    tofile=f"b/{shown}",
                                )
                            )
                        )
                    else:
                        write_atomic(path, result.text, bom)
                        report.fixed += result.applied
                        text = result.text
                findings = result.remaining if not args.diff else analyzer.analyze(text, path)
            else:
                findings = analyzer.analyze(text, path)
        except Exception as exc:  # an internal error in one file is reported, the rest still checked
            report.problems.append(f"{shown}: error: internal error while checking ({type(exc).__name__}: {exc})")
            continue
        report.results.append((shown, text, findings))

    for line in report.problems:
        print(line, file=sys.stderr)
    if args.diff:
        sys.stdout.write("".join(report.diffs))
    elif args.format == "json":
        print(json.dumps(_json(report), indent=2, ensure_ascii=False))
    else:
        _text(report, args)
    if files and report.checked == 0:
        return EXIT_ERROR
    if any("no such file" in p for p in report.problems):
        return EXIT_ERROR
    n_findings = sum(len(f) for _, _, f in report.results)
    if args.diff:
        return EXIT_FINDINGS if report.diffs and not args.exit_zero else EXIT_CLEAN
    return EXIT_FINDINGS if n_findings and not args.exit_zero else EXIT_CLEAN


def _loc(span_pos) -> dict:
    return {"row": span_pos.line + 1, "column": span_pos.col + 1}


def _json(report: Report) -> list[dict]:
    out = []
    for shown, _text_, findings in report.results:
        for f in findings:
            fix = None
            if f.fix is not None:
                fix = {
                    "applicability": f.fix.applicability.value,
                    "message": f.fix.title,
                    "edits": [
                        {"content": e.new_text, "location": _loc(e.span.start), "end_location": _loc(e.span.end)}
                        for e in f.fix.edits
                    ],
                }
            out.append(
                {
                    "filename": shown,
                    "code": f.code,
                    "message": f.message,
                    "severity": f.severity.value,
                    "location": _loc(f.span.start),
                    "end_location": _loc(f.span.end),
                    "noqa_row": f.span.start.line + 1,
                    "fix": fix,
                    "url": f.url,
                    "related": [
                        {"message": r.message, "filename": _display(r.path) if r.path else shown, "location": _loc(r.span.start), "end_location": _loc(r.span.end)}
                        for r in f.related
                    ],
                }
            )
    return out


def _text(report: Report, args) -> None:
    from fabric_lsp.engine.text import Lines

    counts = {"error": 0, "warning": 0, "information": 0, "hint": 0}
    fixable = 0
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")

    def c(code: str, s: str) -> str:
        return f"\x1b[{code}m{s}\x1b[0m" if color else s

    for shown, text, findings in report.results:
        lines = Lines(text)
        for f in findings:
            counts[f.severity.value] += 1
            sev = c("31;1" if f.severity.value == "error" else "33;1", f.severity.value)
            print(f"{c('1', shown)}:{f.span.start.line + 1}:{f.span.start.col + 1}: {c('31', f.code)} [{sev}] {f.message}")
            src = lines.content(f.span.start.line).expandtabs(1)
            num = str(f.span.start.line + 1)
            pad = " " * len(num)
            end_col = f.span.end.col if f.span.end.line == f.span.start.line else len(src)
            print(f"{pad} |")
            print(f"{num} | {src}")
            print(f"{pad} | {' ' * f.span.start.col}{c('31', '^' * max(1, end_col - f.span.start.col))}")
            for r in f.related:
                where = _display(r.path) if r.path else shown
                print(f"{pad} = note: {r.message} ({where}:{r.span.start.line + 1}:{r.span.start.col + 1})")
            if f.fix is not None:
                safe = f.fix.applicability.value == "safe"
                hint = "fix with `--fix`" if safe else "unsafe fix, apply with `--fix --unsafe-fixes`"
                print(f"{pad} = help: {f.fix.title} [{hint}]")
                fixable += 1 if safe else 0
            print()
    total = sum(counts.values())
    if report.fixed:
        print(f"Fixed {report.fixed} problem{'s' if report.fixed != 1 else ''}.")
    if total:
        parts = [f"{n} {k}{'s' if n != 1 and k in ('error', 'warning') else ''}" for k, n in counts.items() if n]
        extra = f" {fixable} fixable with `--fix`." if fixable else ""
        print(f"Found {total} problem{'s' if total != 1 else ''} ({', '.join(parts)}) in {report.checked} file{'s' if report.checked != 1 else ''}.{extra}")
    elif report.checked:
        print(f"All checks passed ({report.checked} file{'s' if report.checked != 1 else ''}).")
