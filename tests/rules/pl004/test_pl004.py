"""PL004 beyond its examples: entry points across modules, certainty, versions, fixes refused."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.python.text import apply_edits
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

PL004 = RULES_BY_CODE["PL004"]
MODEL = """
import lightning as L

class Model(L.LightningModule):
    def validation_epoch_end(self, outputs):
        self.log("v", sum(outputs))
"""


def pl004(source: str, path: str | None = None, workspace: Workspace | None = None, version: str | None = None):
    kwargs = {"lightning_version": version} if version else {}
    analyzer = Analyzer(workspace or Workspace(), [PL004], **kwargs)
    return [f for f in analyzer.analyze(textwrap.dedent(source).lstrip(), path) if f.code == "PL004"]


def _workspace(root: Path, files: dict[str, str]) -> Workspace:
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text).lstrip())
    return Workspace(str(root))


def test_a_fit_in_another_module_makes_the_hook_an_error(tmp_path):
    ws = _workspace(
        tmp_path,
        {"model.py": MODEL, "train.py": "import lightning as L\nfrom model import Model\nL.Trainer().fit(Model())\n"},
    )
    (finding,) = pl004((tmp_path / "model.py").read_text(), str(tmp_path / "model.py"), ws)
    assert finding.severity is Severity.ERROR
    assert "trainer.fit" in finding.message.lower() or "Trainer.fit" in finding.message
    assert finding.related and finding.related[0].path == str(tmp_path / "train.py")
    assert finding.fix is None  # `outputs` is used


def test_a_predict_only_class_is_not_reported(tmp_path):
    ws = _workspace(
        tmp_path,
        {"model.py": MODEL, "run.py": "import lightning as L\nfrom model import Model\nL.Trainer().predict(Model())\n"},
    )
    assert pl004((tmp_path / "model.py").read_text(), str(tmp_path / "model.py"), ws) == []


def test_an_entry_point_on_some_paths_is_a_warning():
    (finding,) = pl004(MODEL + "if train:\n    L.Trainer().fit(Model())\n")
    assert finding.severity is Severity.WARNING


def test_no_entry_point_seen_is_a_warning_that_names_them():
    (finding,) = pl004(MODEL)
    assert finding.severity is Severity.WARNING
    assert "`trainer.fit` or `trainer.validate` raises NotImplementedError" in finding.message


def test_a_class_its_module_never_runs_while_it_runs_others_is_not_reported():
    other = "\nclass Other(L.LightningModule):\n    pass\n\n\ndef test_other():\n    L.Trainer().fit(Other())\n"
    assert pl004(MODEL + other) == []  # the module fits `Other` only: `Model` is visibly not run here
    unknown = "\ndef test_other():\n    L.Trainer().fit(make())\n"
    assert [f.severity for f in pl004(MODEL + unknown)] == [Severity.WARNING]  # `make()` may be a `Model`


@pytest.mark.parametrize("version", ["1.9.5", "1.8.0"])
def test_lightning_1_accepts_the_1x_api(version):
    src = MODEL + "L.Trainer(gpus=1).fit(Model())\nm = Model()\nm.load_from_checkpoint('x')\n"
    assert pl004(src, version=version) == []


#: flag → the first release without it (read in the wheels: tests/runtime/test_trainer_signature.py)
_REMOVED_IN = {
    "distributed_backend": "1.5",
    "reload_dataloaders_every_epoch": "1.6",
    "progress_bar_refresh_rate": "1.7",
    "weights_save_path": "1.8",
}


@pytest.mark.parametrize(
    ("version", "rejected"),
    [
        ("1.4.9", []),
        ("1.5.10", ["distributed_backend"]),
        ("1.6.5", ["distributed_backend", "reload_dataloaders_every_epoch"]),
        ("1.7.7", ["distributed_backend", "reload_dataloaders_every_epoch", "progress_bar_refresh_rate"]),
        ("1.9.5", list(_REMOVED_IN)),
    ],
)
def test_a_1x_release_rejects_the_flags_removed_by_then(version, rejected):
    flags = ", ".join(f"{name}=1" for name in ["gpus", *_REMOVED_IN])
    found = pl004(f"import pytorch_lightning as pl\npl.Trainer({flags})\n", version=version)
    assert [f.severity for f in found] == [Severity.ERROR] * bool(rejected)
    message = found[0].message if found else ""
    named = [name for name in _REMOVED_IN if f"`{name}` (removed in {_REMOVED_IN[name]}; use" in message]
    assert named == rejected
    assert "`gpus`" not in message  # every 1.x release takes `gpus`
    if found:  # the 1.x Trainer of that release is cited (its keywords are not keyword-only)
        line = {"1.5.10": 118, "1.6.5": 129, "1.7.7": 137, "1.9.5": 120}[version]
        assert found[0].lightning == f"pytorch_lightning/trainer/trainer.py:{line} ({version[:3]})"
        assert "keyword-only" not in message


def test_load_from_checkpoint_on_an_instance_is_fine_before_2_1():
    src = "import lightning as L\nclass M(L.LightningModule):\n    pass\nm = M()\nm.load_from_checkpoint('x')\n"
    assert pl004(src, version="2.0.9") == []
    assert len(pl004(src, version="2.1.0")) == 1


def test_2_0_reports_only_the_flags_it_removed():
    src = "import lightning as L\nL.Trainer(gpus=1, model_registry='x')\n"
    (old,) = pl004(src, version="2.0.0")
    assert "`gpus`" in old.message and "model_registry" not in old.message
    (new,) = pl004(src)
    assert "`gpus`" in new.message and "`model_registry`" not in new.message  # 2.6 takes model_registry


def test_an_unknown_keyword_is_a_type_error_and_every_one_is_named():
    (finding,) = pl004("from lightning.pytorch import Trainer\nTrainer(weights_summary=None, max_epoch=3)\n")
    assert finding.severity is Severity.ERROR
    assert "`weights_summary` (removed in 1.7; use" in finding.message
    assert "`max_epoch` (did you mean `max_epochs`?)" in finding.message


def test_a_misspelt_removed_flag_is_named_with_its_replacement():
    # rasbt/deeplearning-models: `Trainer(gpu=1)`, a keyword no release took
    (finding,) = pl004("from lightning.pytorch import Trainer\nTrainer(gpu=1)\n")
    assert finding.fix is None  # a suggestion only
    assert '`gpu` (did you mean `gpus`, removed in 2.0; use `accelerator="gpu", devices=N`?)' in finding.message


def test_a_keyword_the_known_signature_lacks_is_a_warning_a_later_release_may_take_it():
    # pytorch-lightning's own tests pass `suggest_integrations=`, a parameter newer than 2.6.6
    (finding,) = pl004("from lightning.pytorch import Trainer\nTrainer(suggest_integrations=False)\n")
    assert finding.severity is Severity.WARNING
    assert "a later release may take it" in finding.message


@pytest.mark.parametrize("folder", ["src/lightning/pytorch/trainer", "lightning/pytorch/trainer"])
def test_the_projects_own_lightning_tree_decides_its_signature(tmp_path, folder):
    # Lightning's own repository, ahead of the release the facts describe: its Trainer takes the keyword
    (tmp_path / folder).mkdir(parents=True)
    (tmp_path / folder / "trainer.py").write_text(
        "class Trainer:\n    def __init__(self, *, max_epochs=None, suggest_integrations=True):\n        pass\n"
    )
    ws = Workspace(str(tmp_path))
    path = str(tmp_path / "test_trainer.py")
    assert pl004("from lightning.pytorch import Trainer\nTrainer(suggest_integrations=False)\n", path, ws) == []
    (finding,) = pl004(
        "from lightning.pytorch import Trainer\nTrainer(suggest_integrations=False, weights_summary=None)\n", path, ws
    )
    assert "`weights_summary`" in finding.message and "suggest_integrations" not in finding.message


def test_a_trainer_subclass_forwarding_kwargs_is_checked():
    src = """
    import pytorch_lightning as pl
    class MyTrainer(pl.Trainer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
    MyTrainer(tpu_cores=8)
    """
    (finding,) = pl004(src)
    assert finding.severity is Severity.ERROR and "tpu_cores" in finding.message


def test_a_callee_that_may_be_something_else_is_not_reported():
    src = """
    import lightning as L
    make = L.Trainer if fast else dict
    make(gpus=1)
    """
    assert pl004(src) == []


@pytest.mark.parametrize(
    "call, fixed",
    [
        ("Trainer(gpus=0)", 'Trainer(accelerator="cpu")'),
        ("Trainer(gpus=None, max_epochs=1)", 'Trainer(accelerator="cpu", max_epochs=1)'),
        ("Trainer(gpus=-1)", 'Trainer(accelerator="gpu", devices=-1)'),
        ("Trainer(gpus=[0, 1])", 'Trainer(accelerator="gpu", devices=[0, 1])'),
        ("Trainer(gpus=args.gpus)", None),
        ("Trainer(gpus=1, accelerator='gpu')", None),
        ("Trainer(gpus=1, **extra)", None),
        ("Trainer(gpus=True)", None),
    ],
)
def test_the_gpus_fix(call, fixed):
    src = f"from lightning.pytorch import Trainer\n{call}\n"
    (finding,) = pl004(src)
    if fixed is None:
        assert finding.fix is None
    else:
        assert apply_edits(src, finding.fix.edits) == f"from lightning.pytorch import Trainer\n{fixed}\n"


HEAD = "import lightning as L\nclass M(L.LightningModule):\n    pass\n"


@pytest.mark.parametrize(
    "code, fixed",
    [
        ("m = M()\nbest = m.load_from_checkpoint('x')\n", "m = M()\nbest = M.load_from_checkpoint('x')\n"),
        (
            "self_model = M()\nself_model.load_from_checkpoint(path, strict=False)\n",
            "self_model = M()\nself_model = M.load_from_checkpoint(path, strict=False)\n",
        ),
        ("M = None or M\nm = M()\nm.load_from_checkpoint('x')\n", None),  # the name is rebound: type(m)
    ],
)
def test_the_load_fix(code, fixed):
    (finding,) = pl004(HEAD + code)
    assert finding.severity is Severity.ERROR
    out = apply_edits(HEAD + code, finding.fix.edits)
    if fixed is None:
        assert "m = type(m).load_from_checkpoint('x')" in out
    else:
        assert out == HEAD + fixed


def test_a_class_with_its_own_load_from_checkpoint_is_not_reported():
    # its own plain classmethod replaces Lightning's restricted one (utilities/model_helpers.py:107-130)
    code = """
    import lightning as L

    class Base(L.LightningModule):
        @classmethod
        def load_from_checkpoint(cls, path, **kwargs):
            return cls(**kwargs)

    class Model(Base):
        pass

    model = Model()
    model = model.load_from_checkpoint("m.ckpt")
    """
    assert pl004(code) == []


def test_load_from_checkpoint_on_the_class_or_something_unknown_is_fine():
    assert pl004(HEAD + "M.load_from_checkpoint('x')\nwhatever.load_from_checkpoint('x')\n") == []


def test_the_hook_fix_is_refused_where_the_name_is_used_elsewhere():
    src = """
    import lightning as L
    class M(L.LightningModule):
        def training_epoch_end(self, outputs):
            pass
    class N(M):
        def training_epoch_end(self, outputs):
            super().training_epoch_end(outputs)
    """
    findings = pl004(src)
    assert len(findings) == 2 and all(f.fix is None for f in findings)


def test_the_hook_fix_is_refused_where_the_new_hook_exists():
    src = """
    import lightning as L
    class M(L.LightningModule):
        def on_test_epoch_end(self):
            pass
        def test_epoch_end(self, outputs):
            pass
    L.Trainer().test(M())
    """
    (finding,) = pl004(src)
    assert finding.severity is Severity.ERROR and finding.fix is None


def test_hparams_assignment_only_in_lightning_classes():
    src = """
    import lightning as L
    class M(L.LightningModule):
        def __init__(self, hp):
            super().__init__()
            self.hparams = hp
    class Plain:
        def __init__(self, hp):
            self.hparams = hp
    class Own(L.LightningModule):
        hparams = None
        def setup(self, stage):
            self.hparams = {}
    """
    (finding,) = pl004(src)
    assert finding.span.start.line == 4 and finding.severity is Severity.ERROR


@pytest.mark.parametrize(
    "code",
    [
        "class M(L.LightningModule):\n    def __init__(self, cfg):\n        super().__init__()\n        try:\n            self.hparams = cfg\n        except Exception:\n            self.hparams.update(cfg)\n",
        "try:\n    t = L.Trainer(gpus=1)\nexcept TypeError:\n    t = L.Trainer(accelerator='gpu', devices=1)\n",
        "class M(L.LightningModule):\n    pass\nm = M()\ntry:\n    m.load_from_checkpoint('x')\nexcept (ValueError, TypeError):\n    pass\n",
    ],
)
def test_a_failure_the_code_catches_is_not_reported(code):
    assert pl004("import lightning as L\n" + code) == []


def test_a_handler_for_another_exception_does_not_hide_it():
    (finding,) = pl004("import lightning as L\ntry:\n    L.Trainer(gpus=1)\nexcept ValueError:\n    pass\n")
    assert finding.severity is Severity.ERROR


def test_the_bases_of_many_alike_classes_are_judged_once(monkeypatch):
    """Four hundred `nn.Module` classes that assign `self.hparams` (the prefilter lets them in):
    their bases are judged once, not once per class (a count, not a timing)."""
    from fabric_lsp.engine.program import lightning_modules

    judged = []
    real = lightning_modules.lightning_base
    monkeypatch.setattr(
        lightning_modules, "lightning_base", lambda inference, cls: judged.append(cls.name) or real(inference, cls)
    )
    body = "import torch\n" + "\n".join(
        f"class C{i}(torch.nn.Module):\n    def f(self, x):\n        self.hparams = x\n" for i in range(400)
    )
    assert pl004(body, "/tmp/cheap.py") == []
    assert len(judged) == 1


@pytest.mark.parametrize(
    "context",
    [
        "pytest.raises(TypeError)",
        "pytest.raises((ValueError, TypeError), match='gpus')",
        "self.assertRaises(TypeError)",
    ],
)
def test_a_test_that_expects_the_type_error_is_not_reported(context):
    src = f"import pytest\nfrom lightning.pytorch import Trainer\n\ndef test(self):\n    with {context}:\n        Trainer(gpus=1)\n"
    assert pl004(src) == []
    assert [f.severity for f in pl004(src.replace(context, "open('log')"))] == [Severity.ERROR]


# -- load_from_checkpoint on an instance reached through a parameter -----------------------------------
RESTORE = HEAD + "\ndef restore(model, path):\n    model = model.load_from_checkpoint(path)\n    return model\n\n"


def test_an_instance_passed_by_every_caller_is_an_error_without_a_fix():
    (finding,) = pl004(RESTORE + "restore(M(), 'x.ckpt')\nm = M()\nrestore(m, 'y.ckpt')\n")
    assert finding.severity is Severity.ERROR and finding.fix is None
    assert "`model` is a parameter of `restore`" in finding.message and "model_helpers.py:126" in finding.message
    assert [r.message for r in finding.related] == ["an instance of `M` is made here"] * 2
    assert [r.span.start.line for r in finding.related] == [8, 9]  # 0-based: `restore(M(), ...)`, `m = M()`


def test_an_instance_passed_by_keyword_to_a_method_is_an_error():
    src = (
        HEAD
        + "class Runner:\n    def restore(self, model, path):\n        return model.load_from_checkpoint(path)\n\nRunner().restore(model=M(), path='x')\n"
    )
    (finding,) = pl004(src)
    assert finding.severity is Severity.ERROR and finding.fix is None


@pytest.mark.parametrize("other", ["restore(M, 'y.ckpt')", "restore(args.model, 'y.ckpt')"])
def test_an_instance_passed_by_some_callers_is_a_warning(other):
    (finding,) = pl004(RESTORE + f"restore(M(), 'x.ckpt')\n{other}\n")
    assert finding.severity is Severity.WARNING and finding.fix is None


@pytest.mark.parametrize("calls", ["restore(M, 'x.ckpt')\n", "", "run(restore)\n"])
def test_the_class_passed_or_no_caller_in_view_is_silent(calls):
    assert pl004(RESTORE + calls) == []


def test_a_caller_in_another_module_is_seen(tmp_path):
    ws = _workspace(
        tmp_path,
        {
            "lib.py": RESTORE + "restore(M(), 'x.ckpt')\n",
            "main.py": "from lib import restore, M\nrestore(M, 'y.ckpt')\n",
        },
    )
    (finding,) = pl004((tmp_path / "lib.py").read_text(), str(tmp_path / "lib.py"), ws)
    assert finding.severity is Severity.WARNING


def test_a_parameter_rebound_before_the_call_keeps_the_fix():
    src = (
        HEAD
        + "\ndef restore(model, path):\n    model = M()\n    best = model.load_from_checkpoint(path)\n    return best\n"
    )
    (finding,) = pl004(src)
    assert finding.severity is Severity.ERROR and finding.fix is not None and "parameter" not in finding.message


def test_self_in_a_method_keeps_the_fix():
    src = "import lightning as L\nclass M(L.LightningModule):\n    def best(self, path):\n        return self.load_from_checkpoint(path)\n\nM().best('x')\n"
    (finding,) = pl004(src)
    assert finding.fix is not None and "parameter" not in finding.message


def test_the_message_quotes_the_fit_call_of_the_other_module(tmp_path):
    train = "import lightning as L\nfrom model import Model\n\n\ndef main():\n    model = Model()\n    trainer = L.Trainer(max_epochs=1)\n\n    trainer.fit(model)\n"
    ws = _workspace(tmp_path, {"model.py": MODEL, "train.py": train})
    (finding,) = pl004((tmp_path / "model.py").read_text(), str(tmp_path / "model.py"), ws)
    assert "`trainer.fit(...)` runs `Model`" in finding.message


def test_a_hook_of_the_other_import_style_than_every_trainer_is_not_reported(tmp_path):
    """``training_epoch_end`` on a ``pytorch_lightning`` module while every Trainer the workspace runs
    is ``lightning``'s: they refuse the module (``utilities/model_helpers.py:96``), none runs the hook."""
    vendored = MODEL.replace("import lightning as L", "import pytorch_lightning as L")
    own = "import lightning as L\n\nclass Own(L.LightningModule):\n    pass\n"
    ws = _workspace(
        tmp_path,
        {
            "vendored.py": vendored,
            "own.py": own,
            "train.py": "import lightning as L\nfrom own import Own\nL.Trainer().fit(Own())\n",
        },
    )
    assert pl004(vendored, str(tmp_path / "vendored.py"), ws) == []
    (tmp_path / "train.py").write_text("import pytorch_lightning as L\nfrom own import Own\nL.Trainer().fit(Own())\n")
    ws = Workspace(str(tmp_path))
    assert [f.severity for f in pl004(vendored, str(tmp_path / "vendored.py"), ws)] == [Severity.WARNING]


def test_a_hook_of_a_class_outside_the_declared_type_of_every_model_run_is_not_reported(tmp_path):
    """The workspace's only entry points run a model declared as a ``System`` (chosen from a
    registry): ``Model``, no ``System``, is not run there (threestudio's vendored latent-diffusion
    classes). Without the declaration the registry's model may be any class: reported as before."""
    systems = "import lightning as L\n\nSYSTEMS = {}\n\nclass System(L.LightningModule):\n    pass\n"
    train = "import lightning as L\nfrom systems import SYSTEMS, System\n\ndef main(name):\n    system: System = SYSTEMS[name]()\n    L.Trainer().fit(system)\n    L.Trainer().validate(system)\n"
    ws = _workspace(tmp_path, {"model.py": MODEL, "systems.py": systems, "train.py": train})
    assert pl004(MODEL, str(tmp_path / "model.py"), ws) == []
    (tmp_path / "train.py").write_text(train.replace("system: System = ", "system = "))
    ws = Workspace(str(tmp_path))
    (finding,) = pl004(MODEL, str(tmp_path / "model.py"), ws)
    assert finding.severity is Severity.WARNING and "no such call on it is seen" in finding.message


ARGPARSE = """
from argparse import ArgumentParser
import pytorch_lightning as pl
from lightning.pytorch import Trainer

class MyTrainer(Trainer):
    pass

class Own(Trainer):
    @classmethod
    def add_argparse_args(cls, parser):
        return parser

parser = pl.Trainer.add_argparse_args(ArgumentParser())
trainer = Trainer.from_argparse_args(parser.parse_args(), max_epochs=1)
MyTrainer.parse_argparser(parser)
Own.add_argparse_args(parser)
try:
    Trainer.add_argparse_args(parser)
except AttributeError:
    pass
make().add_argparse_args(parser)
"""


def test_the_argparse_classmethods_2_0_removed():
    found = pl004(ARGPARSE)
    assert [(f.span.start.line + 1, f.severity) for f in found] == [
        (13, Severity.ERROR),
        (14, Severity.ERROR),
        (15, Severity.ERROR),
    ]  # not `Own`'s own method, not under `except AttributeError`, not an unknown receiver
    assert found[0].message.startswith(
        "`pl.Trainer.add_argparse_args(...)` raises AttributeError: `Trainer.add_argparse_args` was removed in"
        " Lightning 2.0"
    )
    assert found[0].lightning == "lightning/pytorch/trainer/trainer.py:89" and found[0].fix is None
    assert pl004(ARGPARSE, version="1.9.5") == []
