"""[tool.fabric-lsp] in pyproject.toml configures `fabric-lsp check` and the language server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from fabric_lsp.config import (
    LATEST_LIGHTNING,
    Config,
    Resolver,
    RuleSelection,
    client_layer,
    glob_regex,
    load_layer,
    resolve_rules,
)
from fabric_lsp.engine.findings import Severity
from fabric_lsp.rules import ALL_RULES
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

TIMEOUT = 20

DEEPSPEED = """\
import torch
from fabric_lsp.rules import RULES_BY_CODE
from lightning.fabric import Fabric

fabric = Fabric(strategy="deepspeed_stage_3")
fabric.launch()
model = torch.nn.Linear(4, 4)
model = fabric.setup_module(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer = fabric.setup_optimizers(optimizer)
"""

MAYBE_DEEPSPEED = DEEPSPEED.replace('strategy="deepspeed_stage_3"', 'strategy="deepspeed" if USE_DS else "ddp"')

CLEAN = """\
from lightning.fabric import Fabric

fabric = Fabric(strategy="fsdp")
fabric.launch()
model = fabric.setup_module(model)
optimizer = fabric.setup_optimizers(optimizer)
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content) if name.endswith(".toml") else content, encoding="utf-8")
    return root


def run(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    env.pop("FABRIC_LSP_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "fabric_lsp", "check", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def load(path: str) -> tuple[Config | None, list[str]]:
    layer, problems = load_layer(path)
    return (None if layer is None else Config.build([layer], source=path)), problems


def check_json(cwd: Path, *args: str) -> tuple[list[dict], subprocess.CompletedProcess]:
    proc = run(cwd, "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout), proc


# -- the loader ------------------------------------------------------------------------------------


def test_defaults_without_pyproject(tmp_path):
    config = Resolver().for_path(str(tmp_path / "x.py"))
    assert config.source is None
    assert config.is_enabled("FAB001")
    assert config.severity_override("FAB001") is None
    assert config.report_unknown is False
    assert config.effective_lightning_version  # installed one, else the latest known
    assert Config(lightning_version="2.4").effective_lightning_version == "2.4"


def test_lightning_version_default_is_installed_else_latest(tmp_path):
    venv = tmp_path / "venv"
    dist = venv / "lib" / "python3.11" / "site-packages" / "lightning-2.3.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lightning\nVersion: 2.3.1\n")
    assert Config(environment_path=str(venv)).effective_lightning_version == "2.3.1"
    empty = tmp_path / "empty"
    (empty / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    # the project root (the current folder without a pyproject.toml) declares nothing either
    assert Config(environment_path=str(empty), project_root=str(empty)).effective_lightning_version == LATEST_LIGHTNING


def test_all_keys(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": """
                [project]
                name = "demo"

                [tool.fabric-lsp]
                select = ["FAB"]
                ignore = []
                severity = { FAB001 = "Warning" }
                report-unknown = true
                exclude = ["build/"]
                extend-exclude = ["legacy/", "*_pb2.py"]
                lightning-version = "2.5.1"
            """
        },
    )
    config, problems = load(str(tmp_path / "pyproject.toml"))
    assert problems == []
    assert config.select == ("FAB",) and config.enabled_codes == {r.code for r in ALL_RULES if r.code.startswith("FAB")}
    assert config.severity_override("FAB001") is Severity.WARNING
    assert config.report_unknown is True
    assert config.lightning_version == config.effective_lightning_version == "2.5.1"
    assert config.is_excluded(str(tmp_path / "build" / "a.py"))
    assert config.is_excluded(str(tmp_path / "src" / "legacy" / "a.py"))
    assert config.is_excluded(str(tmp_path / "src" / "api_pb2.py"))
    assert not config.is_excluded(str(tmp_path / "src" / "train.py"))
    # exclude replaces the defaults: virtualenvs are no longer excluded
    assert not config.is_excluded(str(tmp_path / ".venv" / "a.py"))
    assert Config().is_excluded(str(tmp_path / ".venv" / "a.py"), root=str(tmp_path))
    assert not Config().is_excluded(str(tmp_path / ".github" / "a.py"), root=str(tmp_path))


def test_select_ignore_prefixes_most_specific_wins():
    def enabled(**layer) -> bool:
        return Config.build([{k.replace("_", "-"): v for k, v in layer.items()}]).is_enabled("FAB001")

    assert not enabled(ignore=("FAB",))
    assert enabled(select=("FAB001",), ignore=("FAB",))
    assert not enabled(select=("FAB",), ignore=("FAB001",))
    assert not enabled(select=("FAB0",), ignore=("FAB00",))
    assert not enabled(select=("FAB001",), ignore=("FAB001",))  # a tie: ignore wins
    assert enabled(select=("ALL",))
    assert not enabled(select=())


CODES = ["FAB001", "FAB002", "FAB010", "FAB101"]


@pytest.mark.parametrize(
    "layers, expected",
    [
        ([], CODES),
        # a layer's select starts over; ignore and extend-select update the layers below
        ([{"select": ("FAB00",)}], ["FAB001", "FAB002"]),
        ([{"select": ("FAB00",)}, {"extend-select": ("FAB010",)}], ["FAB001", "FAB002", "FAB010"]),
        ([{"ignore": ("FAB002",)}, {"select": ("FAB0",)}], ["FAB001", "FAB002", "FAB010"]),
        ([{"ignore": ("FAB002",)}, {"ignore": ("FAB1",)}], ["FAB001", "FAB010"]),
        # extend-select re-enables what a layer below ignored
        ([{"ignore": ("FAB0",)}, {"extend-select": ("FAB002",)}], ["FAB002", "FAB101"]),
        # within one layer, the more specific selector wins whichever list it is in
        ([{"select": ("FAB0",), "ignore": ("FAB00",), "extend-select": ("FAB002",)}], ["FAB002", "FAB010"]),
        # ruff: an empty select with only ignore carries the ignore to the next layer
        ([{"select": (), "ignore": ("FAB002",)}, {"select": ("FAB00",)}], ["FAB001"]),
        ([{"select": ("ALL",)}, {"select": ()}], []),
    ],
)
def test_rule_selection_layers_follow_ruff(layers, expected):
    selections = [RuleSelection(select=("ALL",))] + [RuleSelection.of(layer) for layer in layers]
    assert sorted(resolve_rules(CODES, selections)) == expected


@pytest.mark.parametrize(
    "pattern, path, matches",
    [
        ("**/__init__.py", "__init__.py", True),
        ("**/__init__.py", "a/b/__init__.py", True),
        ("tests/*", "tests/a/b.py", True),  # globset's default: `*` also matches `/`
        ("tests/**/*.py", "tests/b.py", True),
        ("tests/**/*.py", "src/tests/b.py", False),
        ("scripts/{gen,old}_*.py", "scripts/old_x.py", True),
        ("scripts/{gen,old}_*.py", "scripts/new_x.py", False),
        ("data_[0-9].py", "data_7.py", True),
        ("data_[!0-9].py", "data_7.py", False),
        ("a?.py", "ab.py", True),
        ("a.py", "xa.py", False),
    ],
)
def test_per_file_ignores_globs_match_as_ruffs(pattern, path, matches):
    assert bool(glob_regex(pattern).match(path)) is matches


def test_per_file_ignores(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": """
                [tool.fabric-lsp]
                per-file-ignores = { "tests/**" = ["FAB"], "conftest.py" = ["FAB001"], "!src/**" = ["FAB0"] }
            """
        },
    )
    resolver = Resolver()
    assert not resolver.drain_problems()

    def enabled(rel: str) -> bool:
        return resolver.for_file(str(tmp_path / rel)).is_enabled("FAB001")

    assert enabled("src/train.py")
    assert not enabled("src/tests/conftest.py")  # by its name
    assert not enabled("tests/unit/test_x.py")
    assert not enabled("scripts/run.py")  # negated: everything outside src/
    assert resolver.for_path(str(tmp_path / "scripts" / "run.py")).is_enabled(
        "FAB001"
    )  # the folder's config is untouched


@pytest.mark.parametrize(
    "line, key",
    [
        ('select = "FAB001"', "select"),
        ('select = ["NOPE1"]', "select"),
        ("ignore = [1]", "ignore"),
        ('severity = { FAB001 = "fatal" }', "severity"),
        ('severity = { XYZ = "error" }', "severity"),
        ('severity = "error"', "severity"),
        ('report-unknown = "yes"', "report-unknown"),
        ('exclude = "build"', "exclude"),
        ("extend-exclude = [1, 2]", "extend-exclude"),
        ('lightning-version = "latest"', "lightning-version"),
        ('extend-select = ["FAB9"]', "extend-select"),
        ('per-file-ignores = { "tests/**" = "FAB001" }', "per-file-ignores"),
        ('per-file-ignores = ["tests/**"]', "per-file-ignores"),
        ('per-file-ignores = { "tests/**" = ["NOPE"] }', "per-file-ignores"),
        ("debounce-ms = 10", "debounce-ms"),  # the editor's only
        ("lightning-version = 2.4", "lightning-version"),
        ("colour = true", "colour"),
    ],
)
def test_invalid_value_names_key_and_file_and_defaults_apply(tmp_path, line, key):
    write(
        tmp_path,
        {
            "pyproject.toml": f'[tool.fabric-lsp]\nselect = ["FAB"]\n{line}\n'
            if not line.startswith("select")
            else f"[tool.fabric-lsp]\n{line}\n"
        },
    )
    path = str(tmp_path / "pyproject.toml")
    config, problems = load(path)
    assert len(problems) == 1, problems
    assert f"`{key}`" in problems[0] and path in problems[0]
    default = Config(source=path)
    attr = key.replace("-", "_")
    if hasattr(default, attr):
        assert getattr(config, attr) == getattr(default, attr)
    assert config.is_enabled("FAB001")  # the rest of the configuration still applies


def test_invalid_toml_names_file(tmp_path):
    write(tmp_path, {"pyproject.toml": "[tool.fabric-lsp]\nselect = [\n"})
    config, problems = load(str(tmp_path / "pyproject.toml"))
    assert config is not None and config.is_enabled("FAB001")
    assert len(problems) == 1 and "pyproject.toml" in problems[0] and "invalid TOML" in problems[0]


def test_closest_pyproject_with_table_wins(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.fabric-lsp]\nseverity = { FAB001 = "hint" }\n',
            "pkg/pyproject.toml": '[tool.fabric-lsp]\nseverity = { FAB001 = "information" }\n',
            "pkg/notable/pyproject.toml": '[project]\nname = "x"\n',  # no table: passed over
        },
    )
    resolver = Resolver()
    assert resolver.for_path(str(tmp_path / "a.py")).severity_override("FAB001") is Severity.HINT
    assert resolver.for_path(str(tmp_path / "pkg" / "a.py")).severity_override("FAB001") is Severity.INFORMATION
    assert resolver.for_path(str(tmp_path / "pkg" / "notable" / "a.py")).source == str(
        tmp_path / "pkg" / "pyproject.toml"
    )


def test_resolver_rereads_changed_file_and_reports_problems_once(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.fabric-lsp]\nselect = ["BAD"]\n'})
    resolver = Resolver()
    resolver.for_path(str(tmp_path / "a.py"))
    resolver.for_path(str(tmp_path / "b.py"))
    assert len(resolver.drain_problems()) == 1
    (tmp_path / "pyproject.toml").write_text('[tool.fabric-lsp]\nignore = ["FAB001"]\n')
    os.utime(tmp_path / "pyproject.toml", ns=(1, 1))
    assert not resolver.for_path(str(tmp_path / "a.py")).is_enabled("FAB001")
    assert resolver.drain_problems() == []


def test_client_layer_validates_camel_case_and_null_unsets():
    raw = {
        "extendExclude": ["x/"],
        "lightningVersion": "2.6",
        "reportUnknown": 3,
        "ignore": None,
        "other": 1,
        "debounceMs": 0,
    }
    raw["perFileIgnores"] = {"x.py": ["FAB"]}  # pyproject.toml's only: passed over
    values, problems = client_layer({"fabric-lsp": raw})
    assert values == {"extend-exclude": ("x/",), "lightning-version": "2.6", "debounce-ms": 0}
    assert len(problems) == 1 and "`reportUnknown`" in problems[0]
    config = Config.build([{"severity": (("FAB001", "hint"),)}, {"severity": (("FAB001", "warning"),)}])
    assert config.severity_override("FAB001") is Severity.WARNING
    assert client_layer([1, 2])[1] and client_layer(None) == ({}, [])


def test_severity_override_keeps_the_unknown_hint():
    from fabric_lsp.engine.findings import Certainty, Finding, Pos, Span

    span = Span(Pos(0, 0), Pos(0, 1))
    certain = Finding("FAB001", Severity.ERROR, "m", span)
    unknown = Finding("FAB001", Severity.HINT, "m", span, certainty=Certainty.UNKNOWN)
    config = Config.build([{"severity": (("FAB", "information"),)}])
    assert [f.severity for f in config.apply([certain, unknown])] == [Severity.INFORMATION, Severity.HINT]
    assert Config.build([{"ignore": ("FAB001",)}]).apply([certain, unknown]) == []


def test_the_editors_certain_and_possible_severities_replace_only_the_defaults():
    from fabric_lsp.engine.findings import Certainty, Finding, Pos, Span

    span = Span(Pos(0, 0), Pos(0, 1))
    certain = Finding("FAB001", Severity.ERROR, "m", span)
    possible = Finding("FAB001", Severity.WARNING, "m", span, certainty=Certainty.POSSIBLE)
    only_warns = Finding("FAB005", Severity.WARNING, "m", span)  # certain, but Lightning only warns
    findings = [certain, possible, only_warns]
    assert [f.severity for f in Config().apply(findings)] == [Severity.ERROR, Severity.WARNING, Severity.WARNING]
    editor = Config.build([{"certain-severity": "hint", "possible-severity": "information"}])
    assert [f.severity for f in editor.apply(findings)] == [Severity.HINT, Severity.INFORMATION, Severity.WARNING]
    assert editor.apply(editor.apply(findings)) == editor.apply(findings)  # applied twice: the same
    overridden = Config.build([{"certain-severity": "hint", "severity": (("FAB005", "error"),)}])
    assert [f.severity for f in overridden.apply(findings)] == [Severity.HINT, Severity.WARNING, Severity.ERROR]


def test_layers_are_rebuilt_not_merged(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.fabric-lsp]\nseverity = { FAB001 = "hint" }\nreport-unknown = true\n'})
    resolver = Resolver([{"severity": (("FAB", "warning"),), "report-unknown": False}])
    path = str(tmp_path / "a.py")
    assert resolver.for_path(path).severity_override("FAB001") is Severity.WARNING
    assert resolver.for_path(path).report_unknown is False
    resolver.set_overrides([{}])  # the client unset both: the file's values are back
    assert resolver.for_path(path).severity_override("FAB001") is Severity.HINT
    assert resolver.for_path(path).report_unknown is True
    assert resolver.drain_problems() == []


# -- the CLI ---------------------------------------------------------------------------------------


def test_cli_ignore_and_select(tmp_path):
    write(tmp_path, {"train.py": DEEPSPEED, "pyproject.toml": '[tool.fabric-lsp]\nignore = ["FAB001"]\n'})
    proc = run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed (1 file)" in proc.stdout
    write(tmp_path, {"pyproject.toml": '[tool.fabric-lsp]\nselect = ["FAB001"]\nignore = ["FAB"]\n'})
    findings, proc = check_json(tmp_path)
    assert proc.returncode == 1 and [f["code"] for f in findings] == ["FAB001"]


def test_cli_select_extend_select_ignore_flags_layer_over_pyproject(tmp_path):
    write(tmp_path, {"train.py": DEEPSPEED, "pyproject.toml": '[tool.fabric-lsp]\nignore = ["FAB001"]\n'})
    assert run(tmp_path).returncode == 0
    # --extend-select re-enables a rule the file ignores; --select starts over
    for flags in (
        ["--extend-select", "FAB001"],
        ["--select", "FAB"],
        ["--select", "FAB00,FAB001"],
        ["--select", "ALL"],
    ):
        findings, proc = check_json(tmp_path, *flags)
        assert proc.returncode == 1 and [f["code"] for f in findings] == ["FAB001"], flags
    # --ignore adds to the selection below it, whatever chose it
    findings, proc = check_json(tmp_path, "--select", "FAB", "--ignore", "FAB0")
    assert proc.returncode == 0 and findings == []
    findings, proc = check_json(tmp_path, "--select", "fab001", "--ignore", "FAB", "--ignore", "FAB001")
    assert findings == []
    write(tmp_path, {"pyproject.toml": '[tool.fabric-lsp]\nselect = ["FAB"]\n'})
    assert check_json(tmp_path, "--ignore", "FAB001")[0] == []
    assert [f["code"] for f in check_json(tmp_path, "--ignore", "FAB", "--extend-select", "FAB001")[0]] == ["FAB001"]


@pytest.mark.parametrize("flag", ["--select", "--extend-select", "--ignore"])
def test_cli_unknown_selector_is_one_line_usage_error(tmp_path, flag):
    write(tmp_path, {"train.py": DEEPSPEED})
    proc = run(tmp_path, flag, "FAB001,FAB999")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"fabric-lsp: error: invalid value for {flag}: 'FAB999' matches no rule"
        f" (known: {', '.join(sorted(r.code for r in ALL_RULES))}, or a prefix of them, or ALL)"
    ]


def test_cli_per_file_ignores(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.fabric-lsp]\nper-file-ignores = { "tests/**" = ["FAB"], "smoke_*.py" = ["FAB001"] }\n',
            "src/train.py": DEEPSPEED,
            "src/smoke_ds.py": DEEPSPEED,
            "tests/unit/test_train.py": DEEPSPEED,
        },
    )
    findings, proc = check_json(tmp_path)
    assert [f["filename"].replace(os.sep, "/") for f in findings] == ["src/train.py"]
    # a file named on the command line and standard input get them too
    assert run(tmp_path, "tests/unit/test_train.py").returncode == 0
    proc = run(tmp_path, "--stdin-filename", "src/smoke_2.py", "-", stdin=DEEPSPEED)
    assert proc.returncode == 0, proc.stdout


def test_cli_severity_override_replaces_certain_and_possible(tmp_path):
    write(tmp_path, {"certain.py": DEEPSPEED, "possible.py": MAYBE_DEEPSPEED})
    findings, _ = check_json(tmp_path)
    assert {f["filename"]: f["severity"] for f in findings} == {"certain.py": "error", "possible.py": "warning"}
    write(tmp_path, {"pyproject.toml": '[tool.fabric-lsp]\nseverity = { FAB001 = "information" }\n'})
    findings, proc = check_json(tmp_path)
    assert {f["filename"]: f["severity"] for f in findings} == {
        "certain.py": "information",
        "possible.py": "information",
    }
    assert proc.returncode == 1  # findings of any severity are findings


def test_cli_per_file_config_closest_wins(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.fabric-lsp]\nseverity = { FAB = "hint" }\n',
            "a/train.py": DEEPSPEED,
            "b/pyproject.toml": '[tool.fabric-lsp]\nignore = ["FAB001"]\n',
            "b/train.py": DEEPSPEED,
        },
    )
    findings, _ = check_json(tmp_path)
    assert [(f["filename"], f["severity"]) for f in findings] == [(os.path.join("a", "train.py"), "hint")]


def test_cli_exclude_extend_exclude_and_gitignore(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.fabric-lsp]\nextend-exclude = ["legacy/", "gen_*.py"]\n',
            ".gitignore": "ignored_dir/\n*_local.py\n!keep_local.py\n",
            "src/train.py": DEEPSPEED,
            "src/gen_model.py": DEEPSPEED,
            "legacy/old.py": DEEPSPEED,
            "ignored_dir/x.py": DEEPSPEED,
            "src/scratch_local.py": DEEPSPEED,
            "src/keep_local.py": DEEPSPEED,
            "src/sub/.gitignore": "deep.py\n",
            "src/sub/deep.py": DEEPSPEED,
            ".tox/py311/x.py": DEEPSPEED,
            ".venv-gpu/lib/x.py": DEEPSPEED,
            "venv/lib/x.py": DEEPSPEED,
            ".fabric_lsp_cache/x.py": DEEPSPEED,  # our own cache folder, wherever it is, is never walked
            ".github/scripts/smoke.py": DEEPSPEED,
        },
    )
    findings, _ = check_json(tmp_path)
    names = sorted(f["filename"].replace(os.sep, "/") for f in findings)
    assert names == [".github/scripts/smoke.py", "src/keep_local.py", "src/train.py"]
    findings, _ = check_json(tmp_path, "--no-respect-gitignore")
    names = sorted(f["filename"].replace(os.sep, "/") for f in findings)
    assert names == [
        ".github/scripts/smoke.py",
        "ignored_dir/x.py",
        "src/keep_local.py",
        "src/scratch_local.py",
        "src/sub/deep.py",
        "src/train.py",
    ]


def test_cli_explicit_paths_and_force_exclude(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.fabric-lsp]\nextend-exclude = ["legacy/"]\n', "legacy/old.py": DEEPSPEED})
    # named on the command line: checked (the folder, and the file), as ruff does
    assert run(tmp_path, "legacy").returncode == 1
    assert run(tmp_path, "legacy/old.py").returncode == 1
    # --force-exclude (the pre-commit hook's flag) applies exclude to named files too
    proc = run(tmp_path, "--force-exclude", "legacy/old.py")
    assert proc.returncode == 0, proc.stdout
    assert "excluded" in proc.stderr


def test_cli_invalid_value_warns_and_defaults_apply(tmp_path):
    write(
        tmp_path,
        {
            "train.py": DEEPSPEED,
            "pyproject.toml": '[tool.fabric-lsp]\nseverity = { FAB001 = "fatal" }\nignore = "FAB001"\n',
        },
    )
    proc = run(tmp_path)
    assert proc.returncode == 1  # defaults: FAB001 is on, and an error
    assert "FAB001 [error]" in proc.stdout
    warnings = [line for line in proc.stderr.splitlines() if "pyproject.toml" in line]
    assert len(warnings) == 2, proc.stderr
    assert any("`severity`" in w for w in warnings) and any("`ignore`" in w for w in warnings)
    assert all(str(tmp_path / "pyproject.toml") in w for w in warnings)
    assert "Traceback" not in proc.stderr


def test_cli_stdin_filename_selects_config(tmp_path):
    write(tmp_path, {"pkg/pyproject.toml": '[tool.fabric-lsp]\nseverity = { FAB001 = "warning" }\n'})
    proc = run(tmp_path, "--format", "json", "--stdin-filename", "pkg/train.py", "-", stdin=DEEPSPEED)
    findings = json.loads(proc.stdout)
    assert proc.returncode == 1 and findings[0]["severity"] == "warning"
    assert findings[0]["filename"] == os.path.join("pkg", "train.py")


def test_cli_show_settings(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.fabric-lsp]\nlightning-version = "2.2"\nreport-unknown = true\n'})
    proc = run(tmp_path, "--show-settings", "train.py")
    settings = json.loads(proc.stdout)
    assert proc.returncode == 0
    assert settings["lightning-version"] == "2.2" and settings["report-unknown"] is True
    assert settings["source"] == str(tmp_path / "pyproject.toml")
    assert settings["enabled-rules"] == sorted(r.code for r in ALL_RULES)
    proc = run(tmp_path, "--show-settings", "--ignore", "FAB", "--ignore", "PL", "train.py")
    assert json.loads(proc.stdout)["enabled-rules"] == []


# -- the server ------------------------------------------------------------------------------------


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "fabric_lsp"]))
async def client(lsp_client: LanguageClient):
    lsp_client.registrations = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(ls, params: types.RegistrationParams):
        ls.registrations.extend(params.registrations)

    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


async def start(client: LanguageClient, root: Path, options: dict | None = None, watch: bool = True) -> None:
    caps = client_capabilities("neovim@v0.11.0")
    if caps.workspace is None:
        caps.workspace = types.WorkspaceClientCapabilities()
    caps.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=watch)
    params = types.InitializeParams(
        capabilities=caps,
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(root.as_uri(), root.name)],
        initialization_options={"debounceMs": 0, **(options or {})},
    )
    await asyncio.wait_for(client.initialize_session(params), TIMEOUT)


def open_file(client: LanguageClient, path: Path) -> str:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, path.read_text()))
    )
    return uri


async def diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    async def poll():
        while uri not in client.diagnostics:
            await asyncio.sleep(0.02)
        return list(client.diagnostics[uri])

    return await asyncio.wait_for(poll(), TIMEOUT)


async def republished(client: LanguageClient, uri: str, trigger) -> list[types.Diagnostic]:
    client.diagnostics.pop(uri, None)
    trigger()
    return await diagnostics(client, uri)


@pytest.mark.asyncio
async def test_server_uses_pyproject_and_rereads_it_when_watched_file_changes(client: LanguageClient, tmp_path):
    project = write(
        tmp_path / "proj",
        {"train.py": DEEPSPEED, "pyproject.toml": '[tool.fabric-lsp]\nseverity = { FAB001 = "hint" }\n'},
    )
    await start(client, project)
    uri = open_file(client, project / "train.py")
    diags = await diagnostics(client, uri)
    assert [(d.code, d.severity) for d in diags] == [("FAB001", types.DiagnosticSeverity.Hint)]

    # the server asked to be told about pyproject.toml changes
    async def registered():
        while not client.registrations:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(registered(), TIMEOUT)
    reg = client.registrations[0]
    assert reg.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    assert "**/pyproject.toml" in [w["globPattern"] for w in reg.register_options["watchers"]]  # and **/*.py

    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.fabric-lsp]\nignore = ["FAB001"]\n')
    change = types.DidChangeWatchedFilesParams([types.FileEvent(pyproject.as_uri(), types.FileChangeType.Changed)])
    diags = await republished(client, uri, lambda: client.workspace_did_change_watched_files(change))
    assert diags == []

    # didSave of pyproject.toml (clients without file watching) re-reads it too
    pyproject.write_text('[tool.fabric-lsp]\nseverity = { FAB001 = "warning" }\n')
    save = types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(pyproject.as_uri()))
    diags = await republished(client, uri, lambda: client.text_document_did_save(save))
    assert [(d.code, d.severity) for d in diags] == [("FAB001", types.DiagnosticSeverity.Warning)]


@pytest.mark.asyncio
async def test_server_editor_settings_override_file(client: LanguageClient, tmp_path):
    project = write(
        tmp_path / "proj",
        {
            "train.py": DEEPSPEED,
            "maybe.py": MAYBE_DEEPSPEED,
            "pyproject.toml": '[tool.fabric-lsp]\nignore = ["FAB001"]\n',
        },
    )
    # the editor's extendSelect layers over the file's ignore, as ruff's --extend-select does
    await start(client, project, {"extendSelect": ["FAB001"], "severity": {"FAB001": "information"}})
    for name in ("train.py", "maybe.py"):
        diags = await diagnostics(client, open_file(client, project / name))
        assert [(d.code, d.severity) for d in diags] == [("FAB001", types.DiagnosticSeverity.Information)]
    uri = (project / "train.py").as_uri()
    settings = types.DidChangeConfigurationParams(settings={"fabric-lsp": {"select": ["FAB001"], "ignore": ["FAB001"]}})
    diags = await republished(client, uri, lambda: client.workspace_did_change_configuration(settings))
    assert diags == []


@pytest.mark.asyncio
async def test_server_invalid_pyproject_value_shows_message_and_keeps_running(client: LanguageClient, tmp_path):
    project = write(
        tmp_path / "proj",
        {
            "train.py": DEEPSPEED,
            "pyproject.toml": '[tool.fabric-lsp]\nseverity = { FAB001 = "loud" }\nexclude = "build"\n',
        },
    )
    await start(client, project, watch=False)
    diags = await diagnostics(client, open_file(client, project / "train.py"))
    assert [(d.code, d.severity) for d in diags] == [("FAB001", types.DiagnosticSeverity.Error)]  # the default

    async def message():
        while not client.messages:
            await asyncio.sleep(0.02)
        return client.messages

    messages = await asyncio.wait_for(message(), TIMEOUT)
    assert len(messages) == 1
    assert messages[0].type == types.MessageType.Warning
    assert "`severity`" in messages[0].message and "`exclude`" in messages[0].message
    assert str(project / "pyproject.toml") in messages[0].message
    assert client.registrations == []  # no dynamic registration offered: none attempted
    # still serving: a second document is analysed
    (project / "clean.py").write_text(CLEAN)
    assert await diagnostics(client, open_file(client, project / "clean.py")) == []
    assert len(client.messages) == 1  # reported once, not on every analysis


@pytest.mark.asyncio
async def test_server_respects_exclude(client: LanguageClient, tmp_path):
    project = write(
        tmp_path / "proj",
        {
            "generated/train.py": DEEPSPEED,
            "train.py": DEEPSPEED,
            "pyproject.toml": '[tool.fabric-lsp]\nextend-exclude = ["generated/"]\n',
        },
    )
    await start(client, project)
    assert await diagnostics(client, open_file(client, project / "generated" / "train.py")) == []
    assert len(await diagnostics(client, open_file(client, project / "train.py"))) == 1


def change_settings(client: LanguageClient, settings: dict | None) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=settings))


@pytest.mark.asyncio
async def test_server_unsetting_a_setting_restores_the_default(client: LanguageClient, tmp_path):
    project = write(
        tmp_path / "proj", {"train.py": DEEPSPEED, "pyproject.toml": "[tool.fabric-lsp]\nreport-unknown = false\n"}
    )
    await start(client, project)
    uri = open_file(client, project / "train.py")
    assert [(d.code, d.severity) for d in await diagnostics(client, uri)] == [
        ("FAB001", types.DiagnosticSeverity.Error)
    ]

    settings = {"ignore": ["FAB001"], "certainSeverity": "hint"}
    assert await republished(client, uri, lambda: change_settings(client, {"fabric-lsp": settings})) == []
    # `ignore: null`: back to the default (nothing ignored); certainSeverity still applies
    settings = {"ignore": None, "certainSeverity": "hint"}
    diags = await republished(client, uri, lambda: change_settings(client, {"fabric-lsp": settings}))
    assert [(d.code, d.severity) for d in diags] == [("FAB001", types.DiagnosticSeverity.Hint)]
    # a key no longer sent is back to its default too: nothing is merged onto the old settings
    diags = await republished(client, uri, lambda: change_settings(client, {"fabric-lsp": {}}))
    assert [(d.code, d.severity) for d in diags] == [("FAB001", types.DiagnosticSeverity.Error)]
    # and a per-rule severity unset falls back to pyproject.toml's, not to the old editor value
    (project / "pyproject.toml").write_text('[tool.fabric-lsp]\nseverity = { FAB001 = "warning" }\n')
    settings = {"severity": {"FAB001": "information"}}
    diags = await republished(client, uri, lambda: change_settings(client, {"fabric-lsp": settings}))
    assert [d.severity for d in diags] == [types.DiagnosticSeverity.Information]
    diags = await republished(client, uri, lambda: change_settings(client, {"fabric-lsp": {"severity": None}}))
    assert [d.severity for d in diags] == [types.DiagnosticSeverity.Warning]
    assert client.messages == []


@pytest.mark.asyncio
async def test_server_invalid_setting_shows_one_message_and_uses_the_default(client: LanguageClient, tmp_path):
    project = write(tmp_path / "proj", {"train.py": DEEPSPEED})
    await start(client, project, {"severity": {"FAB001": "hint"}})
    uri = open_file(client, project / "train.py")
    assert [d.severity for d in await diagnostics(client, uri)] == [types.DiagnosticSeverity.Hint]

    settings = {
        "fabric-lsp": {
            "ignore": "FAB001",
            "certainSeverity": "loud",
            "debounceMs": -1,
            "severity": {"FAB001": "warning"},
        }
    }
    diags = await republished(client, uri, lambda: change_settings(client, settings))
    # the invalid keys have their defaults (FAB001 on, an error), the valid one applies
    assert [(d.code, d.severity) for d in diags] == [("FAB001", types.DiagnosticSeverity.Warning)]
    assert len(client.messages) == 1, client.messages
    message = client.messages[0]
    assert message.type == types.MessageType.Warning
    assert all(f"`{k}`" in message.message for k in ("ignore", "certainSeverity", "debounceMs"))
    assert "`severity`" not in message.message
    # and the server keeps serving
    (project / "clean.py").write_text(CLEAN)
    assert await diagnostics(client, open_file(client, project / "clean.py")) == []


@pytest.mark.asyncio
async def test_server_pulls_settings_with_workspace_configuration(client: LanguageClient, tmp_path):
    project = write(tmp_path / "proj", {"train.py": DEEPSPEED})
    await start(client, project)
    uri = open_file(client, project / "train.py")
    assert len(await diagnostics(client, uri)) == 1
    # didChangeConfiguration without settings: the server asks for its section
    client.set_configuration({"ignore": ["FAB"]}, section="fabric-lsp")
    assert await republished(client, uri, lambda: change_settings(client, None)) == []
    client.set_configuration({}, section="fabric-lsp")
    assert len(await republished(client, uri, lambda: change_settings(client, None))) == 1
