"""LightningModules, DataModules and callbacks of analysed source: lineage, hooks through user
bases (across modules), automatic_optimization, and the classes the Trainer's entry points run."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from fabric_lsp import facts
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace


def _model(src: str, path: str = "/tmp/t.py", workspace: Workspace | None = None) -> SemanticModel:
    return SemanticModel(ModuleInfo(textwrap.dedent(src).lstrip(), path), workspace or Workspace())


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip())


def _workspace_model(tmp_path: Path, files: dict[str, str], name: str) -> SemanticModel:
    _write(tmp_path, files)
    path = tmp_path / name
    return SemanticModel(ModuleInfo(path.read_text(), str(path)), Workspace(str(tmp_path)))


def _cls(model: SemanticModel, name: str):
    return next(lc.cls for lc in model.lightning_classes() if lc.name == name)


def test_user_classes_of_each_lightning_base():
    model = _model(
        """
        import lightning as L
        import torch
        from pytorch_lightning.callbacks import Callback
        class Base(L.LightningModule):
            pass
        class Model(Base):
            pass
        class Data(L.LightningDataModule):
            pass
        class Printer(Callback):
            pass
        class Net(torch.nn.Module):
            pass
        """
    )
    found = {lc.name: lc.base for lc in model.lightning_classes()}
    assert found == {
        "Base": facts.LIGHTNING_MODULE_CLASS,
        "Model": facts.LIGHTNING_MODULE_CLASS,
        "Data": facts.DATA_MODULE_CLASS,
        "Printer": facts.CALLBACK_CLASS,
    }


def test_a_hook_defined_in_a_user_base_of_another_module_counts(tmp_path):
    model = _workspace_model(
        tmp_path,
        {
            "base.py": """
                import lightning as L
                class Base(L.LightningModule):
                    def validation_epoch_end(self, outputs):
                        pass
            """,
            "model.py": """
                from base import Base
                class Model(Base):
                    def training_step(self, batch, i):
                        pass
            """,
        },
        "model.py",
    )
    cls = _cls(model, "Model")
    hook = model.hook(cls, "validation_epoch_end")
    assert hook is not None and hook.owner.name == "Base"
    assert model.hook(cls, "training_step").owner.name == "Model"
    assert model.hook(cls, "on_fit_start") is None  # Lightning's own classes are not followed


@pytest.mark.parametrize(
    "body, expected",
    [
        ("pass", True),
        ("automatic_optimization = False", False),
        ("def __init__(self):\n    super().__init__()\n    self.automatic_optimization = False", False),
        ("def setup(self, stage):\n    self.automatic_optimization = True", True),
        ("@property\ndef automatic_optimization(self):\n    return False", False),
        ("def __init__(self, manual):\n    super().__init__()\n    self.automatic_optimization = not manual", None),
    ],
)
def test_automatic_optimization(body, expected):
    src = "import lightning as L\nclass Model(L.LightningModule):\n" + textwrap.indent(body, "    ") + "\n"
    model = _model(src)
    assert model.automatic_optimization(_cls(model, "Model")) is expected


def test_automatic_optimization_set_in_a_user_base():
    model = _model(
        """
        import lightning as L
        class Gan(L.LightningModule):
            automatic_optimization = False
        class Model(Gan):
            pass
        """
    )
    assert model.automatic_optimization(_cls(model, "Model")) is False


def test_fit_targets_through_a_factory_and_the_model_keyword():
    model = _model(
        """
        import lightning as L
        class A(L.LightningModule):
            pass
        class B(L.LightningModule):
            pass
        def build():
            return A()
        trainer = L.Trainer()
        trainer.fit(build())
        if flag:
            trainer.test(model=B())
        """
    )
    (fit,) = model.entry_points(_cls(model, "A"))
    assert (fit.method, fit.every, fit.conditional) == ("fit", True, False)
    (test,) = model.entry_points(_cls(model, "B"))
    assert (test.method, test.every, test.conditional) == ("test", True, True)


def test_fit_targets_in_another_module_and_of_subclasses(tmp_path):
    model = _workspace_model(
        tmp_path,
        {
            "models.py": """
                import lightning as L
                class Base(L.LightningModule):
                    pass
                class Model(Base):
                    pass
            """,
            "train.py": """
                import lightning as L
                from models import Model
                model = Model()
                L.Trainer().fit(model)
                L.Trainer().validate(model, ckpt_path="best")
            """,
        },
        "models.py",
    )
    found = sorted(e.method for e in model.entry_points(_cls(model, "Base")))
    assert found == ["fit", "validate"]


def test_an_entry_point_on_something_else_is_not_one():
    model = _model(
        """
        import lightning as L
        class Model(L.LightningModule):
            pass
        regressor.fit(X, y)
        trainer.fit(other)
        """
    )
    assert model.entry_points(_cls(model, "Model")) == []


def test_trainer_subclass_forwarding():
    model = _model(
        """
        import lightning as L
        class Plain(L.Trainer):
            pass
        class Forwards(L.Trainer):
            def __init__(self, name="x", **kwargs):
                super().__init__(**kwargs)
        class Swallows(L.Trainer):
            def __init__(self, **kwargs):
                super().__init__()
        class Pops(L.Trainer):
            def __init__(self, **kwargs):
                self.custom = kwargs.pop("custom", 0)
                super().__init__(**kwargs)
        """
    )
    classes = {c.name: c for c in model.module.classes()}
    from fabric_lsp.engine.python.values import ClassRef

    def forwards(name, keywords):
        return model.trainer_init_forwards(ClassRef(classes[name], model.module), keywords)

    assert forwards("Plain", {"gpus"}) is True
    assert forwards("Forwards", {"gpus"}) is True
    assert forwards("Forwards", {"name"}) is None
    assert forwards("Swallows", {"gpus"}) is None
    assert forwards("Pops", {"custom"}) is None  # what it pops never reaches the Trainer
    assert forwards("Pops", {"gpus"}) is True


def test_classes_of_unknown_bases_are_not_lightning_classes():
    body = "\n".join(f"class C{i}(Base{i}):\n    def f(self):\n        return {i}\n" for i in range(300))
    model = _model("import torch\n" + body)
    assert model.lightning_classes() == []


def _logged(body: str, bases: str = ""):
    base = "Base" if bases else "L.LightningModule"
    src = "import lightning as L\n" + bases + f"class Model({base}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    model = _model(src)
    return model.logged(_cls(model, "Model"))


def test_log_keys_levels_and_metric_names_per_hook():
    found = _logged(
        """
        def training_step(self, batch, i):
            self.log("train_loss", 1.0)
            self.log("both", 1.0, on_epoch=True)
            return 1.0
        def validation_step(self, batch, i):
            self.log("val_loss", 1.0)
            self.log("val_step_only", 1.0, on_step=True, on_epoch=False)
            self.log_dict({"val_acc": 1.0, "val_f1": 2.0}, on_step=True)
        """
    )
    assert found.complete
    names = {c.key.exact: (c.hook, c.on_step, c.on_epoch, c.callback_metrics()) for c in found.calls}
    assert names == {
        "train_loss": ("training_step", True, False, ("train_loss",)),
        "both": ("training_step", True, True, ("both", "both_step", "both_epoch")),
        "val_loss": ("validation_step", False, True, ("val_loss",)),
        "val_step_only": ("validation_step", True, False, ()),
        "val_acc": ("validation_step", True, True, ("val_acc", "val_acc_epoch")),
        "val_f1": ("validation_step", True, True, ("val_f1", "val_f1_epoch")),
    }


def test_log_through_a_method_of_self_and_a_user_base_runs_under_the_hook():
    found = _logged(
        """
        def validation_step(self, batch, i):
            self._shared(batch, "val")
        """,
        bases="class Base(L.LightningModule):\n    def _shared(self, batch, stage):\n        self.log(f'{stage}_loss', 1.0)\n        self.log(stage + '/acc', 1.0)\n",
    )
    assert found.complete
    assert [(c.hook, c.key.exact) for c in found.calls] == [
        ("validation_step", "val_loss"),
        ("validation_step", "val/acc"),
    ]
    assert found.calls[0].callback_metrics() == ("val_loss",)


def test_partly_known_keys_are_patterns():
    found = _logged(
        """
        def validation_step(self, batch, i):
            self.log(f"{self.prefix}_loss", 1.0)
            self.log("val/" + self.metric_name, 1.0)
        """
    )
    keys = [(c.key.exact, c.key.prefix, c.key.suffix) for c in found.calls]
    assert keys == [(None, "", "_loss"), (None, "val/", "")]
    assert found.calls[0].key.may_be("val_loss") and not found.calls[0].key.may_be("val_acc")
    assert found.calls[0].callback_metrics() is None and found.complete


def test_keys_that_are_not_known_make_the_set_incomplete():
    for body in (
        "def training_step(self, batch, i):\n    self.log(self.name_of(batch), 1.0)\n",
        "def training_step(self, batch, i):\n    log_everything(self, batch)\n",
        "def training_step(self, batch, i):\n    self.log_dict(metrics)\n",
        "def training_step(self, batch, i):\n    return super().training_step(batch, i)\n",
    ):
        assert not _logged(body).complete, body


def test_a_key_held_by_a_constant_is_known():
    found = _logged(
        'KEY = "val_loss"\ndef validation_step(self, batch, i):\n    self.log(self.KEY, 1.0, on_epoch=None)\n'
    )
    (call,) = found.calls
    assert call.key.exact == "val_loss" and call.on_epoch is True and found.complete


def test_log_outside_a_hook_that_may_log_is_not_collected():
    found = _logged("def configure_optimizers(self):\n    self.log('lr', 1.0)\n")
    assert found.calls == () and found.complete


def _optimizers(body: str):
    src = "import torch\nimport lightning as L\nfrom torch.optim.lr_scheduler import ReduceLROnPlateau\nclass Model(L.LightningModule):\n"
    model = _model(src + textwrap.indent(textwrap.dedent(body), "    "))
    return model.configure_optimizers(_cls(model, "Model"))


def _summary(configs):
    return [
        (
            c.optimizers,
            None if c.schedulers is None else [(s.monitor, s.monitor_known, s.plateau) for s in c.schedulers],
        )
        for c in configs
    ]


@pytest.mark.parametrize(
    "body, expected",
    [
        ("def configure_optimizers(self):\n    return torch.optim.Adam(self.parameters())\n", [(1, [])]),
        (
            "def configure_optimizers(self):\n    g = torch.optim.Adam(self.g.parameters())\n    d = torch.optim.Adam(self.d.parameters())\n    return g, d\n",
            [(2, [])],
        ),
        (
            "def configure_optimizers(self):\n    opt = torch.optim.SGD(self.parameters(), lr=1)\n"
            "    return [opt], [torch.optim.lr_scheduler.StepLR(opt, 1)]\n",
            [(1, [(None, True, False)])],
        ),
        (
            "def configure_optimizers(self):\n    opt = torch.optim.SGD(self.parameters(), lr=1)\n"
            "    return {'optimizer': opt, 'lr_scheduler': ReduceLROnPlateau(opt), 'monitor': 'val_loss'}\n",
            [(1, [("val_loss", True, True)])],
        ),
        (
            "def configure_optimizers(self):\n    opt = torch.optim.SGD(self.parameters(), lr=1)\n"
            "    sched = {'scheduler': ReduceLROnPlateau(opt), 'monitor': self.monitor}\n"
            "    return {'optimizer': opt, 'lr_scheduler': sched}\n",
            [(1, [(None, False, True)])],
        ),
        (
            "def configure_optimizers(self):\n    a = torch.optim.SGD(self.parameters(), lr=1)\n"
            "    return [{'optimizer': a, 'lr_scheduler': {'scheduler': ReduceLROnPlateau(a), 'monitor': 'loss'}}, {'optimizer': a}]\n",
            [(2, [("loss", True, True)])],
        ),
        ("def configure_optimizers(self):\n    return build_optimizers(self)\n", [(None, None)]),
        (
            "def configure_optimizers(self):\n    if self.sgd:\n        return torch.optim.SGD(self.parameters())\n    return [torch.optim.Adam(self.a), torch.optim.Adam(self.b)]\n",
            [(1, []), (2, [])],
        ),
        ("def configure_optimizers(self):\n    return None\n", [(0, [])]),
    ],
)
def test_configure_optimizers_forms(body, expected):
    assert _summary(_optimizers(body)) == expected


def test_no_configure_optimizers_in_analysed_source():
    assert _optimizers("pass\n") is None


def _callback(src: str):
    model = _model(src)
    call = model.module.tree.body[-1].value
    return model.monitor_callback(call)


def test_model_checkpoint_arguments_defaults_and_positional():
    cb = _callback(
        "from lightning.pytorch.callbacks import ModelCheckpoint\nModelCheckpoint('ckpts', None, 'val_loss', save_top_k=3)\n"
    )
    assert cb.kind == facts.MODEL_CHECKPOINT_CLASS
    assert dict(cb.arguments) == {
        "monitor": ("val_loss",),
        "save_top_k": (3,),
        "mode": ("min",),
        "every_n_epochs": (None,),
        "every_n_train_steps": (None,),
        "train_time_interval": (None,),
    }


def test_early_stopping_arguments_through_names_and_branches():
    cb = _callback(
        "import pytorch_lightning as pl\nKEY = 'val_acc' if acc else 'val_loss'\npl.callbacks.EarlyStopping(monitor=KEY, mode=mode, strict=False)\n"
    )
    assert cb.kind == facts.EARLY_STOPPING_CLASS
    assert set(cb.argument("monitor")) == {"val_acc", "val_loss"}
    assert cb.argument("mode") is None and cb.argument("strict") == (False,)


def test_unknown_callback_arguments():
    cb = _callback("from lightning.pytorch.callbacks import ModelCheckpoint\nModelCheckpoint(**cfg)\n")
    assert cb.argument("monitor") is None
    own_init = "import lightning as L\nclass CB(L.pytorch.callbacks.ModelCheckpoint):\n    def __init__(self):\n        super().__init__(monitor='x')\nCB()\n"
    assert _callback(own_init) is None
    assert _callback("def ModelCheckpoint(**kw):\n    pass\nModelCheckpoint(monitor='x')\n") is None


def test_the_classes_an_entry_point_runs(tmp_path):
    model = _workspace_model(
        tmp_path,
        {
            "models.py": "import lightning as L\nclass A(L.LightningModule):\n    pass\nclass B(L.LightningModule):\n    pass\n"
            "def build(kind):\n    return A() if kind == 'a' else B()\n",
            "train.py": "import lightning as L\nfrom models import build\ntrainer = L.Trainer()\ntrainer.fit(build(arg))\n"
            "trainer.test(model=build('a'))\ntrainer.validate(something_else)\ntrainer.predict()\n",
        },
        "train.py",
    )
    fit, test, validate, predict = (model.method_calls(n)[0] for n in ("fit", "test", "validate", "predict"))
    classes, unknown = model.entry_point_classes(fit)
    assert sorted(c.name for c in classes) == ["A", "B"] and not unknown
    classes, unknown = model.entry_point_classes(test)
    assert [c.name for c in classes] == ["A"] and not unknown
    assert model.entry_point_classes(validate) == ([], True)
    assert model.entry_point_classes(predict) == ([], True)


# -- `self` of a class that is no Trainer -----------------------------------------------------------
_OWN = """
import lightning as L
class Recipe:
    def apply(self, model):
        return self.validate(model)
    @staticmethod
    def build(self):
        return self.validate(1)
    def rebound(self, other):
        self = other
        return self.validate(1)
    def nested(self):
        def inner():
            return self.validate(1)
        return inner
class MyTrainer(L.Trainer):
    def run(self, model):
        return self.fit(model)
class Mixed(Recipe, L.Trainer):
    def go(self, model):
        return self.test(model)
"""


@pytest.mark.parametrize(
    "method, expected",
    [("apply", True), ("build", False), ("rebound", False), ("inner", False), ("run", False), ("go", False)],
)
def test_self_of_a_class_deriving_from_no_trainer(method, expected):
    model = _model(_OWN)
    func = next(n for n in ast.walk(model.module.tree) if isinstance(n, ast.FunctionDef) and n.name == method)
    call = next(n for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute))
    assert model.own_instance_not_trainer(call.func.value) is expected


def test_an_entry_point_called_on_self_of_a_plain_class_reads_no_other_module(tmp_path, monkeypatch):
    """`self.validate(model)` in a class that is no Trainer (lightning-thunder's recipes) is the
    class's own method: PL003 and PL005 do not evaluate `self`, which would read every module that
    mentions the class to find its subclasses and constructions."""
    from fabric_lsp.engine.analyzer import Analyzer
    from fabric_lsp.rules import RULES_BY_CODE

    files = {
        "recipe.py": "class Recipe:\n    def apply(self, model):\n        return self.validate(model)\n    def test(self):\n        return self.test()\n"
    }
    files.update(
        {
            f"user{i}.py": f"from recipe import Recipe\nclass R{i}(Recipe):\n    pass\nR{i}().apply(None)\n"
            for i in range(4)
        }
    )
    _write(tmp_path, files)
    ws = Workspace(str(tmp_path))
    loaded: list[str] = []
    load = ws.load_path
    monkeypatch.setattr(ws, "load_path", lambda path, name=None: loaded.append(path) or load(path, name))
    analyzer = Analyzer(ws, [RULES_BY_CODE["PL003"], RULES_BY_CODE["PL005"]])
    path = tmp_path / "recipe.py"
    assert analyzer.analyze(path.read_text(), str(path)) == []
    assert [p for p in loaded if not p.endswith("recipe.py")] == []
