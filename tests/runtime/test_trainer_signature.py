"""`facts.TRAINER_PARAMETERS` (PL004: every other `Trainer(...)` keyword is a TypeError) is the
installed Lightning's `Trainer.__init__` signature, keyword-only, with no `**kwargs`; the
removed 1.x flags PL004 names are refused with a TypeError; and each was removed in the release
`facts.REMOVED_TRAINER_ARGUMENTS` names (read in pytorch-lightning's wheels of the releases on
either side)."""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
import urllib.request
import zipfile
from pathlib import Path

import pytest
from ci_env import in_ci
from fabric_lsp import facts

pytestmark = pytest.mark.runtime
ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import inspect, json
from lightning.pytorch import Trainer
params = list(inspect.signature(Trainer.__init__).parameters.values())[1:]
refused = []
for name in json.loads(input()):
    try:
        Trainer(**{name: 1})
    except TypeError as e:
        if "unexpected keyword argument" in str(e):
            refused.append(name)
    except Exception:
        pass
print(json.dumps({"names": [p.name for p in params], "kinds": sorted({p.kind.name for p in params}), "refused": refused}))
"""


def test_trainer_parameters_are_the_installed_signature(runtime_python, runtime_env):
    removed = sorted(facts.REMOVED_TRAINER_ARGUMENTS)
    proc = subprocess.run(
        [str(runtime_python), "-c", PROBE],
        input=json.dumps(removed),
        capture_output=True,
        text=True,
        env=runtime_env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert tuple(out["names"]) == facts.TRAINER_PARAMETERS
    assert out["kinds"] == ["KEYWORD_ONLY"]  # no **kwargs: any other keyword is a TypeError
    assert out["refused"] == removed
    assert not set(removed) & set(facts.TRAINER_PARAMETERS)


#: (the last release with a flag, the first without it) for each release ``RemovedArgument.since`` names
_BOUNDARIES = {
    (1, 5): ("1.4.9", "1.5.0"),
    (1, 6): ("1.5.10", "1.6.0"),
    (1, 7): ("1.6.5", "1.7.0"),
    (1, 8): ("1.7.7", "1.8.0"),
    (2, 0): ("1.9.5", "2.0.0"),
}
WHEELS = ROOT / "tests" / ".artifacts" / "pytorch-lightning-wheels"


def _download(wheel: Path) -> None:
    """``wheel`` from PyPI, through its simple index (JSON), checked against the index's sha256.
    Not ``pip download``: pip 24.1 and later refuse these releases (their metadata says
    ``torch>=1.7.*``, a specifier PEP 440 does not allow)."""
    request = urllib.request.Request(
        "https://pypi.org/simple/pytorch-lightning/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        files = json.load(response)["files"]
    entry = next((f for f in files if f["filename"] == wheel.name), None)
    if entry is None:
        raise KeyError(f"{wheel.name} is not on the index")
    with urllib.request.urlopen(entry["url"], timeout=300) as response:
        data = response.read()
    if hashlib.sha256(data).hexdigest() != entry["hashes"]["sha256"]:
        raise ValueError(f"{wheel.name}: sha256 differs from the index's")
    WHEELS.mkdir(parents=True, exist_ok=True)
    partial = wheel.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(wheel)


def _trainer_init(version: str) -> ast.FunctionDef:
    """``Trainer.__init__`` in the pytorch-lightning wheel of ``version`` (downloaded from PyPI
    once, read with :mod:`ast`, never installed)."""
    wheel = WHEELS / f"pytorch_lightning-{version}-py3-none-any.whl"
    if not wheel.exists():
        try:
            _download(wheel)
        except (OSError, ValueError, KeyError) as exc:
            message = f"{wheel.name} could not be downloaded from PyPI: {exc!r}"
            if in_ci():
                pytest.fail(message)
            pytest.skip(message)
    tree = ast.parse(zipfile.ZipFile(wheel).read("pytorch_lightning/trainer/trainer.py"))
    trainer = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Trainer")
    return next(f for f in trainer.body if isinstance(f, ast.FunctionDef) and f.name == "__init__")


def _trainer_keywords(version: str) -> set[str]:
    init = _trainer_init(version)
    assert init.args.kwarg is None  # no **kwargs: any other keyword is a TypeError
    return {a.arg for a in (*init.args.args, *init.args.kwonlyargs)}


@pytest.mark.parametrize("since", sorted(_BOUNDARIES))
def test_each_removed_flag_is_gone_from_the_release_it_names(since):
    flags = sorted(name for name, removed in facts.REMOVED_TRAINER_ARGUMENTS.items() if removed.since == since)
    before, first = (_trainer_keywords(v) for v in _BOUNDARIES[since])
    assert flags and [f for f in flags if f in before and f not in first] == flags


def test_every_removed_flag_names_a_release_read_here():
    assert {removed.since for removed in facts.REMOVED_TRAINER_ARGUMENTS.values()} <= set(_BOUNDARIES)


@pytest.mark.parametrize(("release", "last_patch"), [((1, 5), 10), ((1, 6), 5), ((1, 7), 7), ((1, 8), 6), ((1, 9), 5)])
def test_the_1x_trainer_init_lines_pl004_cites(release, last_patch):
    from fabric_lsp.rules.pl004.rule import _TRAINER_INIT_1X

    assert _trainer_init(f"{release[0]}.{release[1]}.{last_patch}").lineno == _TRAINER_INIT_1X[release]
