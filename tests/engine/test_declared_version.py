"""The Lightning version a project declares (its requirements files), and where the effective
version comes from: the setting, else the installed one, else the declared one, else the latest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fabric_lsp import declared_version
from fabric_lsp.config import LATEST_LIGHTNING, Config, Resolver
from fabric_lsp.declared_version import declared_lightning_version, newest_allowed, read_declared
from fabric_lsp.facts import KNOWN_LIGHTNING_RELEASES
from packaging.specifiers import SpecifierSet


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content), encoding="utf-8")
    return root


def declared(root: Path) -> str | None:
    found = read_declared(str(root))
    return found.version if found else None


# -- ranges ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("specifier", "version"),
    [
        (">=1.5,<2", "1.9.5"),
        ("~=1.6.0", "1.6.5"),
        ("==1.5.10", "1.5.10"),
        ("==1.5.3", "1.5.3"),  # a patch the table leaves out: the pin itself
        ("<2.0", "1.9.5"),
        ("<=1.5.3", "1.5.3"),
        ("==1.7.*", "1.7.7"),
        (">=1.4.9", LATEST_LIGHTNING),
        ("", LATEST_LIGHTNING),
        ("==0.7.6", "0.7.6"),
    ],
)
def test_the_newest_release_the_specifier_allows(specifier, version):
    assert newest_allowed(SpecifierSet(specifier)) == version


def test_the_known_releases_end_at_the_latest():
    assert KNOWN_LIGHTNING_RELEASES[-1] == LATEST_LIGHTNING
    assert list(KNOWN_LIGHTNING_RELEASES) == sorted(
        KNOWN_LIGHTNING_RELEASES, key=lambda v: tuple(map(int, v.split(".")))
    )


def test_nothing_allowed_is_no_version():
    assert newest_allowed(SpecifierSet(">=2,<1")) is None


# -- each kind of file -----------------------------------------------------------------------------


def test_requirements_txt(tmp_path):
    write(tmp_path, {"requirements.txt": "torch>=1.10\npytorch-lightning==1.5.10  # the paper's\n"})
    found = read_declared(str(tmp_path))
    assert found is not None and found.version == "1.5.10"
    assert found.where == "requirements.txt: pytorch-lightning==1.5.10"


def test_a_hashed_requirement(tmp_path):
    write(tmp_path, {"requirements.txt": "pytorch-lightning==1.7.7 --hash=sha256:0123\\\n    --hash=sha256:4567\n"})
    assert declared(tmp_path) == "1.7.7"


def test_requirements_folder_and_includes(tmp_path):
    write(tmp_path, {"requirements/base.txt": "-r ../common/pins.txt\n", "common/pins.txt": "pytorch_lightning<1.7\n"})
    assert declared(tmp_path) == "1.6.5"


def test_an_include_loop_ends(tmp_path):
    write(
        tmp_path,
        {
            "requirements.txt": "-r requirements-dev.txt\nlightning~=2.1.0\n",
            "requirements-dev.txt": "-r requirements.txt\n",
        },
    )
    assert declared(tmp_path) == "2.1.4"


def test_pyproject_dependencies_and_extras(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": """
            [project]
            name = "x"
            dependencies = ["torch", "numpy"]
            [project.optional-dependencies]
            train = ["lightning>=2.0,<2.3"]
            """
        },
    )
    assert declared(tmp_path) == "2.2.5"


@pytest.mark.parametrize(
    ("constraint", "version"),
    [
        ('"^1.5"', "1.9.5"),
        ('"~1.6"', "1.6.5"),
        ('"1.8.6"', "1.8.6"),
        ('"*"', LATEST_LIGHTNING),
        ('{version = "<2"}', "1.9.5"),
    ],
)
def test_poetry_dependencies(tmp_path, constraint, version):
    write(
        tmp_path, {"pyproject.toml": f"[tool.poetry.dependencies]\npython = '^3.9'\npytorch-lightning = {constraint}\n"}
    )
    assert declared(tmp_path) == version


def test_setup_py_is_read_never_run(tmp_path):
    write(
        tmp_path,
        {
            "setup.py": """
            import sys
            sys.exit("setup.py was run")
            REQUIRED = ["torch", "pytorch-lightning>=1.3,<1.4"]
            setup(name="x", install_requires=REQUIRED)
            """
        },
    )
    assert declared(tmp_path) == "1.3.8"


def test_setup_py_with_a_literal_list(tmp_path):
    write(tmp_path, {"setup.py": "from setuptools import setup\nsetup(install_requires=['lightning-fabric==2.0.9'])\n"})
    assert declared(tmp_path) == "2.0.9"


def test_setup_cfg(tmp_path):
    write(tmp_path, {"setup.cfg": "[options]\ninstall_requires =\n    torch\n    pytorch-lightning>=1.4,<1.5\n"})
    assert declared(tmp_path) == "1.4.9"


@pytest.mark.parametrize(
    ("entry", "version"),
    [
        ("  - pytorch-lightning=1.5", "1.5.10"),
        ("  - conda-forge::pytorch-lightning==1.4.9", "1.4.9"),
        ("  - pytorch-lightning 1.6.*", "1.6.5"),
        ("  - pip:\n    - pytorch-lightning==1.9.0", "1.9.0"),
    ],
)
def test_environment_yml(tmp_path, entry, version):
    write(
        tmp_path, {"environment.yml": f"name: x\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.9\n{entry}\n"}
    )
    assert declared(tmp_path) == version


@pytest.mark.parametrize("name", ["env.yml", "env.cpu.yml", "requirements.yaml", "conda.yaml"])
def test_other_conda_files_at_the_root(tmp_path, name):
    write(tmp_path, {name: "dependencies:\n  - pytorch-lightning=1.3.8\n"})
    assert declared(tmp_path) == "1.3.8"


@pytest.mark.parametrize(
    ("files", "version", "where"),
    [
        ({"Pipfile": '[packages]\npytorch-lightning = "==1.0.7"\n'}, "1.0.7", 'Pipfile: pytorch-lightning = "==1.0.7"'),
        ({"Pipfile": '[dev-packages]\nlightning = {version = "~=2.1.0"}\n'}, "2.1.4", None),
        ({"Pipfile": '[packages]\npytorch-lightning = "*"\n'}, LATEST_LIGHTNING, None),
        # `pipenv install` installs what the lock pins (uncertify: "*" in the Pipfile, 1.0.7 locked)
        (
            {
                "Pipfile": '[packages]\npytorch-lightning = "*"\n',
                "Pipfile.lock": json.dumps({"default": {"pytorch-lightning": {"version": "==1.0.7"}}}),
            },
            "1.0.7",
            'Pipfile.lock: pytorch-lightning = "==1.0.7"',
        ),
        ({"Pipfile": "[packages\n", "Pipfile.lock": "{not json"}, None, None),
    ],
)
def test_pipfile_and_its_lock(tmp_path, files, version, where):
    write(tmp_path, files)
    found = read_declared(str(tmp_path))
    assert (found.version if found else None) == version
    if where:
        assert found is not None and found.where == where


def test_a_pipfile_change_is_seen(tmp_path, monkeypatch):
    monkeypatch.setattr(declared_version, "STAMP_TTL", 0.0)
    write(tmp_path, {"Pipfile": '[packages]\npytorch-lightning = "==1.5.10"\n'})
    assert declared_lightning_version(str(tmp_path)).version == "1.5.10"
    (tmp_path / "Pipfile").write_text('[packages]\npytorch-lightning = "==1.9.0"\n')
    os.utime(tmp_path / "Pipfile", ns=(1, 1))
    assert declared_lightning_version(str(tmp_path)).version == "1.9.0"
    assert declared_version.is_declaration("sub/Pipfile") and declared_version.is_declaration("Pipfile.lock")


@pytest.mark.parametrize(
    ("files", "version", "where"),
    [
        # kylevedder/zeroflow: the image its instructions run pins 1.9.4, a second image 2.0.6
        (
            {
                "docker/Dockerfile": "FROM nvidia/cuda:11.7.1\nRUN pip install \\\n    torch==1.13.1 \\\n"
                "    pytorch-lightning==1.9.4 nntime\n",
                "docker/DockerfileTorch2": "FROM pytorch/pytorch\nRUN pip install pytorch-lightning==2.0.6\n",
            },
            "1.9.4",
            "docker/Dockerfile: pytorch-lightning==1.9.4",
        ),
        (
            {"Dockerfile": "RUN python -m pip install --no-cache-dir 'lightning>=2.1,<2.2' && rm -rf /tmp\n"},
            "2.1.4",
            None,
        ),
        ({"gpu.Dockerfile": "RUN conda install -y pip && pip install pytorch_lightning==1.6.5\n"}, "1.6.5", None),
        # a comment, an install of something else, a folder named like a Dockerfile: nothing
        (
            {
                "Dockerfile": "# RUN pip install pytorch-lightning==1.5.0\nRUN pip install -r requirements.txt\n",
                "Dockerfiles/x.txt": "pytorch-lightning==1.5.0\n",
            },
            None,
            None,
        ),
        # a requirement file that names Lightning comes first where the two disagree
        ({"requirements.txt": "lightning==2.2.0\n", "Dockerfile": "RUN pip install lightning==2.0.0\n"}, "2.2.0", None),
        # … and a Dockerfile's pin within a requirement's range decides it
        (
            {
                "requirements.txt": "pytorch-lightning>=1.5\n",
                "Dockerfile": "RUN pip install pytorch-lightning==1.9.4\n",
            },
            "1.9.4",
            None,
        ),
    ],
)
def test_a_dockerfiles_install_lines(tmp_path, files, version, where):
    write(tmp_path, files)
    found = read_declared(str(tmp_path))
    assert (found.version if found else None) == version
    if where:
        assert found is not None and found.where == where


def test_a_dockerfile_change_is_seen(tmp_path, monkeypatch):
    monkeypatch.setattr(declared_version, "STAMP_TTL", 0.0)
    write(tmp_path, {"docker/Dockerfile": "RUN pip install pytorch-lightning==1.5.10\n"})
    assert declared_lightning_version(str(tmp_path)).version == "1.5.10"
    (tmp_path / "docker" / "Dockerfile").write_text("RUN pip install pytorch-lightning==1.9.0\n")
    os.utime(tmp_path / "docker" / "Dockerfile", ns=(1, 1))
    assert declared_lightning_version(str(tmp_path)).version == "1.9.0"
    assert declared_version.is_declaration("docker/Dockerfile") and declared_version.is_declaration("cpu.Dockerfile")
    assert not declared_version.is_declaration("docker/entrypoint.sh")


@pytest.mark.parametrize(
    ("files", "version"),
    [
        # FarinaMatteo/multiflow: deps/requirements.txt and deps/environment.yaml, code at the root
        ({"deps/requirements.txt": "lightning==2.0.4\n", "captioning.py": "import lightning\n"}, "2.0.4"),
        ({"env/environment.yaml": "dependencies:\n  - pip:\n    - pytorch-lightning==1.9.0\n"}, "1.9.0"),
        # a folder with Python code at any depth is a sub-project (or documentation), not the root's
        ({"week_1/requirements.txt": "pytorch-lightning==1.2.10\n", "week_1/train.py": ""}, None),
        ({"docs/requirements.txt": "pytorch-lightning==1.4.0\n", "docs/source/conf.py": ""}, None),
        # the root's own files come first; the README only where no folder names Lightning
        ({"requirements.txt": "lightning==2.2.0\n", "deps/requirements.txt": "lightning==2.0.4\n"}, "2.2.0"),
        ({"README.md": "pip install lightning==2.1.0\n", "deps/requirements.txt": "lightning==2.0.4\n"}, "2.0.4"),
    ],
)
def test_a_folder_of_dependencies(tmp_path, files, version):
    write(tmp_path, files)
    assert declared(tmp_path) == version


def test_a_change_in_a_folder_of_dependencies_is_seen(tmp_path, monkeypatch):
    monkeypatch.setattr(declared_version, "STAMP_TTL", 0.0)
    write(tmp_path, {"deps/requirements.txt": "lightning==2.0.4\n"})
    assert declared_lightning_version(str(tmp_path)).version == "2.0.4"
    (tmp_path / "deps" / "requirements.txt").write_text("lightning==2.0.9\n")
    os.utime(tmp_path / "deps" / "requirements.txt", ns=(1, 1))
    assert declared_lightning_version(str(tmp_path)).version == "2.0.9"
    (tmp_path / "deps" / "setup_env.py").write_text("")  # now code: no longer a folder of dependencies
    assert declared_lightning_version(str(tmp_path)) is None


def test_a_requirement_whose_marker_is_false_is_left_out(tmp_path):
    write(
        tmp_path,
        {
            "requirements.txt": 'pytorch-lightning==1.9.*; python_version < "3.0"\nlightning>=2.1; python_version >= "3.0"\n'
        },
    )
    assert declared(tmp_path) == LATEST_LIGHTNING


def test_an_unpinned_requirement_is_the_latest(tmp_path):
    write(tmp_path, {"requirements.txt": "lightning\n"})
    assert declared(tmp_path) == LATEST_LIGHTNING


def test_no_lightning_requirement_declares_nothing(tmp_path):
    write(tmp_path, {"requirements.txt": "torch\nlightning-utilities==0.9\n", "setup.py": "x = 1\n"})
    assert read_declared(str(tmp_path)) is None


@pytest.mark.parametrize(
    ("readme", "version"),
    [
        ("## Install\n```\npip3 install pytorch-lightning==1.7.2\n```\n", "1.7.2"),
        ("```\ntorch==1.8.1\npytorch_lightning==1.3.8\n```\n", "1.3.8"),
        ("Our code requires PyTorch 1.11.0 and PyTorch Lightning 1.4.4.\n", "1.4.4"),
        ("Tested with pytorch-lightning v1.6.\n", "1.6.5"),
        ('pip install "lightning>=2.1"\n', LATEST_LIGHTNING),
        ("Built with [Lightning](https://lightning.ai) 2023.\n", None),
        ("See lightning.ai/docs/pytorch/1.9.0/ for the API.\n", None),
        ("A project pinning `pytorch-lightning==1.5.10` gets 1.x's rules.\n", None),  # a sentence, not an install
    ],
)
def test_a_readme_is_read_where_no_requirement_file_names_lightning(tmp_path, readme, version):
    write(tmp_path, {"README.md": readme, "requirements.txt": "torch\n"})
    assert declared(tmp_path) == version


def test_a_requirement_file_wins_over_the_readme(tmp_path):
    write(tmp_path, {"README.md": "pip install pytorch-lightning==1.7.2\n", "requirements.txt": "lightning>=2.2\n"})
    assert declared(tmp_path) == LATEST_LIGHTNING


# -- several requirements --------------------------------------------------------------------------


def test_several_files_intersect(tmp_path):
    write(
        tmp_path,
        {
            "requirements.txt": "pytorch-lightning>=1.5\n",
            "setup.py": "setup(install_requires=['pytorch-lightning<1.8'])\n",
        },
    )
    found = read_declared(str(tmp_path))
    assert found is not None and found.version == "1.7.7"
    assert found.where == "setup.py: pytorch-lightning<1.8"  # the requirement that bounds it


def test_disagreeing_files_take_the_first(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\ndependencies = ["lightning>=2.2"]\n',
            "requirements.txt": "pytorch-lightning==1.5.10\n",
        },
    )
    found = read_declared(str(tmp_path))
    assert found is not None and (found.version, found.file) == (LATEST_LIGHTNING, "pyproject.toml")


# -- malformed input -------------------------------------------------------------------------------


def test_malformed_files_and_lines_are_skipped(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": "[project\ndependencies = [",
            "setup.py": "setup(install_requires=[\n",
            "setup.cfg": "not an ini file\n[options\n",
            "environment.yml": "dependencies: [\n  - ::=\n",
            "requirements.txt": "pytorch-lightning>>1.5\n-r missing.txt\n--index-url https://x\n\x00\npytorch-lightning==1.8.6\n",
        },
    )
    assert declared(tmp_path) == "1.8.6"


def test_unusual_values_are_skipped(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\ndependencies = 3\noptional-dependencies = [1]\n[tool.poetry]\ndependencies = 'x'\n"
        },
    )
    assert read_declared(str(tmp_path)) is None


# -- once per root ---------------------------------------------------------------------------------


def test_read_again_only_when_a_file_changed(tmp_path, monkeypatch):
    monkeypatch.setattr(declared_version, "STAMP_TTL", 0.0)
    reads = []
    real = declared_version.read_declared
    monkeypatch.setattr(declared_version, "read_declared", lambda root: reads.append(root) or real(root))
    write(tmp_path, {"requirements.txt": "pytorch-lightning==1.5.10\n"})
    first = declared_lightning_version(str(tmp_path))
    assert declared_lightning_version(str(tmp_path)) == first and len(reads) == 1
    (tmp_path / "requirements.txt").write_text("pytorch-lightning==1.9.0\n")
    os.utime(tmp_path / "requirements.txt", ns=(0, 0))
    second = declared_lightning_version(str(tmp_path))
    assert second is not None and second.version == "1.9.0" and len(reads) == 2


def test_an_included_file_elsewhere_is_watched(tmp_path, monkeypatch):
    monkeypatch.setattr(declared_version, "STAMP_TTL", 0.0)
    write(
        tmp_path,
        {"project/requirements.txt": "-r ../shared/pins.txt\n", "shared/pins.txt": "pytorch-lightning==1.5.10\n"},
    )
    assert declared_lightning_version(str(tmp_path / "project")).version == "1.5.10"
    (tmp_path / "shared/pins.txt").write_text("pytorch-lightning==1.9.0\n")
    os.utime(tmp_path / "shared/pins.txt", ns=(0, 0))
    assert declared_lightning_version(str(tmp_path / "project")).version == "1.9.0"


def test_a_later_process_reuses_the_versions_while_their_files_stay_the_same(tmp_path, monkeypatch):
    write(
        tmp_path,
        {
            "a/requirements.txt": "pytorch-lightning==1.5.10\n",
            "b/pyproject.toml": '[project]\ndependencies = ["lightning==2.1.0"]\n',
        },
    )
    for folder in ("a", "b", "c"):
        declared_lightning_version(str(tmp_path / folder))
    kept = declared_version.remembered()
    declared_version.forget()  # as a new process
    declared_version.recall(kept)
    monkeypatch.setattr(declared_version, "read_declared", lambda root: pytest.fail(f"read again: {root}"))
    assert [getattr(declared_lightning_version(str(tmp_path / f)), "version", None) for f in "abc"] == [
        "1.5.10",
        "2.1.0",
        None,
    ]
    monkeypatch.undo()
    (tmp_path / "a/requirements.txt").write_text("pytorch-lightning==1.9.0\n")
    os.utime(tmp_path / "a/requirements.txt", ns=(0, 0))
    declared_version.forget()
    declared_version.recall(kept)
    assert declared_lightning_version(str(tmp_path / "a")).version == "1.9.0"
    declared_version.recall("not what remembered() gives")  # a damaged cache is ignored


# -- the effective version -------------------------------------------------------------------------


def _venv(root: Path, version: str) -> Path:
    dist = root / "lib" / "python3.11" / "site-packages" / f"pytorch_lightning-{version}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: pytorch-lightning\nVersion: {version}\n")
    return root


def _empty_venv(root: Path) -> Path:
    (root / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    return root


def test_precedence_setting_installed_declared_default(tmp_path):
    project = write(tmp_path / "project", {"requirements.txt": "pytorch-lightning==1.5.10\n"})
    installed = str(_venv(tmp_path / "venv", "2.3.1"))
    empty = str(_empty_venv(tmp_path / "empty"))
    nothing = str(tmp_path / "nothing")
    os.mkdir(nothing)
    root = str(project)
    setting = Config(lightning_version="2.0", environment_path=installed, project_root=root)
    assert setting.lightning_version_and_source == ("2.0", "setting")
    assert Config(environment_path=installed, project_root=root).lightning_version_and_source == (
        "2.3.1",
        f"installed ({installed})",
    )
    assert Config(environment_path=empty, project_root=root).lightning_version_and_source == (
        "1.5.10",
        "declared (requirements.txt: pytorch-lightning==1.5.10)",
    )
    assert Config(environment_path=empty, project_root=nothing).lightning_version_and_source == (
        LATEST_LIGHTNING,
        "default",
    )


def test_a_pyproject_of_ours_is_the_root(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\ndependencies = ["pytorch-lightning~=1.6.0"]\n[tool.fabric-lsp]\n',
            "sub/x.py": "",
        },
    )
    empty = str(_empty_venv(tmp_path / "empty"))
    config = Resolver([{"environment-path": empty}], project_root=str(tmp_path / "sub")).for_path(
        str(tmp_path / "sub" / "x.py")
    )
    assert config.effective_lightning_version == "1.6.5"


def test_the_checked_root_without_a_pyproject(tmp_path):
    write(tmp_path, {"requirements.txt": "pytorch-lightning<1.5\n"})
    empty = str(_empty_venv(tmp_path / "empty"))
    config = Resolver([{"environment-path": empty}], project_root=str(tmp_path)).for_path(str(tmp_path / "x.py"))
    assert config.source is None and config.effective_lightning_version == "1.4.9"


# -- the command line ------------------------------------------------------------------------------

HOOK = """\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_epoch_end(self, outputs):
        pass


model = Model()
trainer = pl.Trainer()
trainer.fit(model)
"""


def check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    env.pop("FABRIC_LSP_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "fabric_lsp", "check", "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def _codes(cwd: Path) -> list[str]:
    proc = check(cwd, "--environment", str(_empty_venv(cwd / ".venv")), "--format", "json", ".")
    assert proc.returncode in (0, 1), proc.stderr
    return [f["code"] for f in json.loads(proc.stdout)]


@pytest.mark.parametrize(("pin", "reported"), [("pytorch-lightning==1.9.0", False), ("pytorch-lightning>=2", True)])
def test_a_project_pinned_to_lightning_1_gets_its_rules(tmp_path, pin, reported):
    write(tmp_path, {"requirements.txt": pin + "\n", "train.py": HOOK})
    assert ("PL004" in _codes(tmp_path)) is reported


def test_the_cache_is_not_reused_under_another_declared_version(tmp_path):
    write(tmp_path, {"requirements.txt": "pytorch-lightning>=2\n", "train.py": HOOK})
    env = str(_empty_venv(tmp_path / ".venv"))
    codes = []
    for pin in ("pytorch-lightning>=2\n", "pytorch-lightning==1.9.0\n"):
        (tmp_path / "requirements.txt").write_text(pin)
        env_vars = dict(os.environ, NO_COLOR="1")
        cmd = [sys.executable, "-m", "fabric_lsp", "check", "--environment", env, "--format", "json", "."]
        proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env_vars)
        codes.append([f["code"] for f in json.loads(proc.stdout)])
    assert codes == [["PL004"], []]
    assert (tmp_path / ".fabric_lsp_cache").is_dir()


def test_show_settings_says_where_the_version_comes_from(tmp_path):
    write(tmp_path, {"requirements.txt": "pytorch-lightning==1.5.10\n"})
    proc = check(tmp_path, "--environment", str(_empty_venv(tmp_path / ".venv")), "--show-settings", ".")
    shown = json.loads(proc.stdout)
    assert shown["lightning-version"] == "1.5.10"
    assert shown["lightning-version-source"] == "declared (requirements.txt: pytorch-lightning==1.5.10)"


# -- sub-projects ----------------------------------------------------------------------------------


def test_a_sub_project_declares_its_own_version(tmp_path):
    write(
        tmp_path,
        {"week_1/requirements.txt": "pytorch-lightning==1.2.10\n", "week_1/src/train.py": HOOK, "top.py": HOOK},
    )
    empty = str(_empty_venv(tmp_path / ".venv"))
    resolver = Resolver([{"environment-path": empty}], project_root=str(tmp_path))
    inner = resolver.for_file(str(tmp_path / "week_1" / "src" / "train.py"))
    assert inner.lightning_version_and_source == (
        "1.2.10",
        f"declared ({os.path.join('week_1', 'requirements.txt')}: pytorch-lightning==1.2.10)",
    )
    assert resolver.for_file(str(tmp_path / "top.py")).lightning_version_and_source == (LATEST_LIGHTNING, "default")


def test_a_sub_folder_readme_does_not_declare(tmp_path):
    write(
        tmp_path, {"requirements.txt": "lightning>=2.1\n", "docs/README.md": "pip install pytorch-lightning==1.5.10\n"}
    )
    assert declared_version.declaring_folder(str(tmp_path / "docs"), str(tmp_path)) is None


def test_the_setting_wins_over_a_sub_project(tmp_path):
    write(tmp_path, {"sub/requirements.txt": "pytorch-lightning==1.2.10\n"})
    config = Resolver([{"lightning-version": "2.6.6"}], project_root=str(tmp_path)).for_file(
        str(tmp_path / "sub" / "x.py")
    )
    assert config.lightning_version_and_source == ("2.6.6", "setting")


def test_the_command_line_checks_each_sub_project_with_its_version(tmp_path):
    write(tmp_path, {"old/requirements.txt": "pytorch-lightning==1.9.0\n", "old/train.py": HOOK, "new/train.py": HOOK})
    proc = check(tmp_path, "--environment", str(_empty_venv(tmp_path / ".venv")), "--format", "json", ".")
    assert sorted((f["code"], Path(f["filename"]).parent.name) for f in json.loads(proc.stdout)) == [
        ("PL004", "new")
    ], proc.stdout


# -- a notebook's own install cells ------------------------------------------------------------------


def notebook(cells: list[str]) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": "code", "source": c.splitlines(True), "metadata": {}, "outputs": []} for c in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


TRAINER_CELL = "import pytorch_lightning as pl\ntrainer = pl.Trainer(gpus=1, progress_bar_refresh_rate=20)\n"


@pytest.mark.parametrize(
    ("install", "version"),
    [
        ("!pip install pytorch-lightning==1.5.2 --quiet", "1.5.2"),
        ("%pip install -q 'lightning==2.0.0' torchvision", "2.0.0"),
        ("pip install pytorch-lightning==1.5.2", "1.5.2"),  # IPython's automagic runs it as %pip
        ("%%capture\n!python -m pip install pytorch-lightning==1.6.5", "1.6.5"),
        ("!pip install pytorch-lightning", None),  # unpinned: the project's files decide
        ("# pip install pytorch-lightning==1.5.2", None),  # a comment installs nothing
        ("print('pip install pytorch-lightning==1.5.2')", None),
    ],
)
def test_a_notebook_declares_what_its_cells_install(tmp_path, install, version):
    write(tmp_path, {"nb.ipynb": notebook([install, TRAINER_CELL])})
    found = declared_version.notebook_declared(str(tmp_path / "nb.ipynb"))
    assert (found.version if found else None) == version


def test_a_notebooks_own_pin_comes_before_the_projects(tmp_path):
    write(
        tmp_path,
        {
            "requirements.txt": "lightning>=2.1\n",
            "old.ipynb": notebook(["!pip install pytorch-lightning==1.5.2 --quiet", TRAINER_CELL]),
            "new.ipynb": notebook([TRAINER_CELL]),
        },
    )
    empty = str(_empty_venv(tmp_path / ".venv"))
    resolver = Resolver([{"environment-path": empty}], project_root=str(tmp_path))
    assert resolver.for_file(str(tmp_path / "old.ipynb")).lightning_version_and_source == (
        "1.5.2",
        "declared (old.ipynb: pytorch-lightning==1.5.2)",
    )
    assert resolver.for_file(str(tmp_path / "new.ipynb")).lightning_version_and_source[0] == LATEST_LIGHTNING
    # Packt's book notebooks: the flags 1.5 still takes are not reported there
    proc = check(tmp_path, "--environment", empty, "--format", "json", ".")
    assert sorted((f["code"], f["filename"]) for f in json.loads(proc.stdout)) == [("PL004", "new.ipynb")]
    # its install cell runs over what the environment has: before the installed version, after the setting
    installed = str(_venv(tmp_path / "venv", "2.3.1"))
    config = Resolver([{"environment-path": installed}], project_root=str(tmp_path)).for_file(
        str(tmp_path / "old.ipynb")
    )
    assert config.lightning_version_and_source[0] == "1.5.2"
    setting = Resolver([{"lightning-version": "2.6.6"}], project_root=str(tmp_path)).for_file(
        str(tmp_path / "old.ipynb")
    )
    assert setting.lightning_version_and_source == ("2.6.6", "setting")
