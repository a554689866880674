"""`facts.TRAINER_PARAMETERS` (PL004: every other `Trainer(...)` keyword is a TypeError) is the
installed Lightning's `Trainer.__init__` signature, keyword-only, with no `**kwargs`; and the
removed 1.x flags PL004 names are refused with a TypeError."""

from __future__ import annotations

import json
import subprocess

import pytest
from fabric_lsp import facts

pytestmark = pytest.mark.runtime

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
