"""PL003 beyond its examples: entry points across modules, user bases, versions, several returns."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

PL003 = RULES_BY_CODE["PL003"]
GAN = """
import lightning as L
from torch.optim import Adam

class GAN(L.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def configure_optimizers(self):
        return [Adam(self.g.parameters()), Adam(self.d.parameters())]
"""


def pl003(source: str, path: str | None = None, workspace: Workspace | None = None, version: str | None = None):
    kwargs = {"lightning_version": version} if version else {}
    analyzer = Analyzer(workspace or Workspace(), [PL003], **kwargs)
    return [f for f in analyzer.analyze(textwrap.dedent(source).lstrip(), path) if f.code == "PL003"]


def _workspace(root: Path, files: dict[str, str]) -> Workspace:
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text).lstrip())
    return Workspace(str(root))


def test_a_fit_in_another_module_makes_it_an_error(tmp_path):
    ws = _workspace(
        tmp_path,
        {
            "gan.py": GAN,
            "train.py": "import lightning as L\nfrom gan import GAN\nmodel = GAN()\nL.Trainer().fit(model)\n",
        },
    )
    (finding,) = pl003((tmp_path / "gan.py").read_text(), str(tmp_path / "gan.py"), ws)
    assert finding.severity is Severity.ERROR
    assert "returns 2 optimizers" in finding.message and "core/optimizer.py:358-363" in finding.message
    assert finding.related and finding.related[0].path == str(tmp_path / "train.py")
    assert finding.span.start.line == GAN.lstrip().splitlines().index(
        "        return [Adam(self.g.parameters()), Adam(self.d.parameters())]"
    )


def test_no_fit_seen_is_a_warning_and_a_class_only_validated_is_silent():
    assert [f.severity for f in pl003(GAN)] == [Severity.WARNING]
    assert pl003(GAN + "\nL.Trainer().validate(GAN())\n") == []


def test_a_fit_on_some_paths_is_a_warning():
    assert [f.severity for f in pl003(GAN + "\nif args.train:\n    L.Trainer().fit(GAN())\n")] == [Severity.WARNING]


def test_manual_optimisation_in_a_user_base_class_is_seen():
    base = GAN.replace(
        "class GAN(L.LightningModule):",
        "class Base(L.LightningModule):\n    def __init__(self):\n        super().__init__()\n        self.automatic_optimization = False\n\nclass GAN(Base):",
    )
    assert pl003(base + "\nL.Trainer().fit(GAN())\n") == []


def test_one_return_with_one_optimizer_makes_it_a_warning():
    src = GAN.replace(
        "        return [Adam(self.g.parameters()), Adam(self.d.parameters())]",
        "        if self.single:\n            return Adam(self.parameters())\n        return [Adam(self.g.parameters()), Adam(self.d.parameters())]",
    )
    assert [f.severity for f in pl003(src + "\nL.Trainer().fit(GAN())\n")] == [Severity.WARNING]


def test_optimizer_idx_is_reported_once_at_the_parameter_even_with_two_optimizers():
    src = GAN.replace(
        "def training_step(self, batch, batch_idx):", "def training_step(self, batch, batch_idx, optimizer_idx):"
    )
    (finding,) = pl003(src + "\nL.Trainer().fit(GAN())\n")
    assert finding.severity is Severity.ERROR and "optimizer_idx" in finding.message
    assert "core/optimizer.py:352-357" in finding.message


def test_optimizer_idx_in_kwargs_only_is_not_explicit():
    src = GAN.replace(
        "def training_step(self, batch, batch_idx):", "def training_step(self, batch, batch_idx, **kwargs):"
    )
    src = src.replace("return [Adam(self.g.parameters()), Adam(self.d.parameters())]", "return Adam(self.parameters())")
    assert pl003(src + "\nL.Trainer().fit(GAN())\n") == []


def test_lightning_1x_is_not_reported():
    src = GAN.replace(
        "def training_step(self, batch, batch_idx):", "def training_step(self, batch, batch_idx, optimizer_idx):"
    )
    assert pl003(src + "\nL.Trainer().fit(GAN())\n", version="1.9.5") == []


def test_an_unknown_number_of_optimizers_is_silent():
    src = GAN.replace("return [Adam(self.g.parameters()), Adam(self.d.parameters())]", "return self.make_optimizers()")
    assert pl003(src + "\nL.Trainer().fit(GAN())\n") == []


VENDORED_VQ = """
import pytorch_lightning as pl
from torch.optim import Adam

class VQModel(pl.LightningModule):
    def training_step(self, batch, batch_idx, optimizer_idx):
        return batch.sum()

    def configure_optimizers(self):
        return [Adam(self.encoder.parameters()), Adam(self.disc.parameters())], []
"""
OWN_SEG = """
import lightning.pytorch as pl

class Seg(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()
"""


@pytest.mark.parametrize(
    "train, reported",
    [
        # the project's only Trainer is `lightning.pytorch`'s: it refuses a `pytorch_lightning` module (TypeError first)
        (
            "import lightning.pytorch as pl\nfrom seg import Seg\ntrainer = pl.Trainer(devices=1)\ntrainer.fit(Seg())\n",
            False,
        ),
        (
            "from lightning import Trainer\nfrom seg import Seg\nTrainer().fit(Seg())\nTrainer().validate(Seg())\n",
            False,
        ),
        # a Trainer of the same import style may run it (some script of the user's): reported as before
        ("import pytorch_lightning as pl\nfrom seg import Seg\npl.Trainer().fit(Seg())\n", True),
        # a Trainer from a config (its package is not known): reported as before
        (
            "import hydra\nfrom seg import Seg\ntrainer = hydra.utils.instantiate(cfg.trainer)\ntrainer.fit(Seg())\n",
            True,
        ),
        # no Trainer at all (a library): written to be run, reported as before
        ("from seg import Seg\nmodel = Seg()\n", True),
    ],
)
def test_a_module_of_the_other_import_style_than_every_trainer_is_not_reported(tmp_path, train, reported):
    """A vendored copy of 1.x code (``import pytorch_lightning``) in a project whose Trainers are all
    ``lightning.pytorch`` ones (damaggu/TADP's ldm_cross_attention): those Trainers raise
    ``TypeError`` for a ``pytorch_lightning`` module (``utilities/model_helpers.py:96``) before any
    ``optimizer_idx`` check, so no Trainer of the workspace reaches it."""
    (tmp_path / "vendored").mkdir()
    ws = _workspace(tmp_path, {"vendored/autoencoder.py": VENDORED_VQ, "seg.py": OWN_SEG, "train.py": train})
    path = tmp_path / "vendored" / "autoencoder.py"
    found = pl003(path.read_text(), str(path), ws)
    assert [f.severity for f in found] == ([Severity.WARNING] if reported else [])


REGISTRY = """
__modules__ = {}

def register(name):
    def decorator(cls):
        __modules__[name] = cls
        return cls
    return decorator

def find(name):
    return __modules__[name]
"""
SYSTEMS = """
import pytorch_lightning as pl
import registry

class BaseSystem(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

@registry.register("dreamfusion")
class DreamFusion(BaseSystem):
    pass
"""
LAUNCH = """
import pytorch_lightning as pl
import registry
from systems import BaseSystem

def main(cfg):
    system: BaseSystem = registry.find(cfg.system_type)(cfg.system)
    trainer = pl.Trainer(**cfg.trainer)
    trainer.fit(system)
    trainer.test(system)
"""
NOT_DECLARED = LAUNCH.replace("system: BaseSystem = ", "system = ")


@pytest.mark.parametrize(
    "launch, extra, reported",
    [
        # the only entry points run a model declared as a `BaseSystem`, which `VQModel` is not: not run here
        (LAUNCH, {}, False),
        # the same, the model a parameter declared with the type
        (
            "import pytorch_lightning as pl\nfrom systems import BaseSystem\n\ndef run(system: BaseSystem, trainer: pl.Trainer):\n    trainer.fit(system)\n",
            {},
            False,
        ),
        # a fit of a particular class besides the declared one: what runs is still known
        (
            LAUNCH + "\ndef smoke():\n    from systems import DreamFusion\n    pl.Trainer().fit(DreamFusion())\n",
            {},
            False,
        ),
        # no declared type: the registry's model is not known, and may be any LightningModule
        (NOT_DECLARED, {}, True),
        # declared with Lightning's own class: any LightningModule
        (LAUNCH.replace("system: BaseSystem", "system: pl.LightningModule"), {}, True),
        # declared with the class itself (or a base of it)
        (
            LAUNCH.replace("from systems import BaseSystem", "from vendored.autoencoder import VQModel as BaseSystem"),
            {},
            True,
        ),
        # another entry point whose model is not known
        (LAUNCH + "\ndef other(cfg):\n    pl.Trainer().fit(build(cfg))\n", {}, True),
        # a class of the project derives from both: a `BaseSystem` may be a `VQModel`
        (
            LAUNCH,
            {
                "hybrid.py": "from systems import BaseSystem\nfrom vendored.autoencoder import VQModel\n\nclass Hybrid(BaseSystem, VQModel):\n    pass\n"
            },
            True,
        ),
        # a notebook calls an entry point (notebooks are not among the modules followed)
        (LAUNCH, {"play.ipynb": '{"cells": [{"cell_type": "code", "source": ["trainer.fit(model)"]}]}'}, True),
        # the particular classes of a library's examples say nothing of what its users fit: reported as before
        (
            "import pytorch_lightning as pl\nfrom systems import DreamFusion\npl.Trainer().fit(DreamFusion())\n",
            {},
            True,
        ),
    ],
)
def test_a_class_outside_the_declared_type_of_every_model_run_is_not_reported(tmp_path, launch, extra, reported):
    """threestudio's shape: its launch script fits ``system: BaseSystem = threestudio.find(name)(...)``
    (a registry of its systems); a vendored latent-diffusion ``VQModel`` with ``optimizer_idx``,
    used only as a frozen part of a guidance model, is no ``BaseSystem``: no entry point of the
    workspace runs it. The declaration is what says so: without it, or with a model not known
    elsewhere, the class may be run and is reported as before."""
    (tmp_path / "vendored").mkdir()
    ws = _workspace(
        tmp_path,
        {
            "vendored/autoencoder.py": VENDORED_VQ,
            "registry.py": REGISTRY,
            "systems.py": SYSTEMS,
            "launch.py": launch,
            **extra,
        },
    )
    path = tmp_path / "vendored" / "autoencoder.py"
    found = pl003(path.read_text(), str(path), ws)
    assert [f.severity for f in found] == ([Severity.WARNING] if reported else [])
