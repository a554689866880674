"""PL003's Trainer half: the Trainer of a ``trainer.fit(model)`` call refuses how the model optimises
(automatic clipping or accumulation under manual optimisation, several optimizers under DeepSpeed)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fabric_lsp.engine.analyzer import Analyzer
from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

PL003 = RULES_BY_CODE["PL003"]
VALIDATOR = "lightning/pytorch/trainer/configuration_validator.py"
MANUAL = """
import lightning as L
import torch
from lightning.pytorch.strategies import DeepSpeedStrategy

class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
"""
AUTOMATIC = MANUAL.replace("        self.automatic_optimization = False\n", "")
TWO = MANUAL.replace(
    "return torch.optim.SGD(self.parameters(), lr=0.1)",
    "return [torch.optim.SGD(self.a.parameters()), torch.optim.Adam(self.b.parameters())]",
)
SCHEDULERS = AUTOMATIC.replace(
    "return torch.optim.SGD(self.parameters(), lr=0.1)",
    "opt = torch.optim.SGD(self.parameters())\n        return [opt], [torch.optim.lr_scheduler.StepLR(opt, 1), torch.optim.lr_scheduler.ExponentialLR(opt, 0.9)]",
)


def pl003(source: str, path: str | None = None, workspace: Workspace | None = None, version: str | None = None):
    kwargs = {"lightning_version": version} if version else {}
    analyzer = Analyzer(workspace or Workspace(), [PL003], **kwargs)
    return [f for f in analyzer.analyze(textwrap.dedent(source).lstrip(), path) if f.code == "PL003"]


def fit(module: str, trainer: str) -> list:
    return pl003(module + f"\ntrainer = {trainer}\ntrainer.fit(Model())\n")


def severities(module: str, trainer: str) -> list[Severity]:
    return [f.severity for f in fit(module, trainer)]


@pytest.mark.parametrize(
    "setting",
    [
        "def __init__(self, manual=False):\n        super().__init__()\n        if manual:\n            self.automatic_optimization = False",
        "def on_fit_start(self):\n        self.automatic_optimization = False",
    ],
)
def test_manual_optimisation_set_on_some_paths_only_is_not_judged(setting):
    # `Model()` keeps the default True: configuration_validator.py:120 returns before the clipping check
    module = MANUAL.replace(
        "def __init__(self):\n        super().__init__()\n        self.automatic_optimization = False", setting
    )
    assert setting in module
    assert fit(module, "L.Trainer(max_epochs=1, gradient_clip_val=1.0)") == []


def test_gradient_clip_val_under_manual_optimisation_is_an_error_at_the_fit_call():
    (finding,) = fit(MANUAL, "L.Trainer(max_epochs=1, gradient_clip_val=1.0)")
    assert finding.severity is Severity.ERROR
    assert (
        "Automatic gradient clipping is not supported for manual optimization. Remove `Trainer(gradient_clip_val=1.0)`"
        " or switch to automatic optimization." in finding.message
    )
    assert f"{VALIDATOR}:122-127" in finding.message
    assert (
        finding.span.start.line == (MANUAL + "\ntrainer = x\n").strip().count("\n") + 1
    )  # the `trainer.fit(...)` line
    assert finding.related and "`gradient_clip_val` is given here" in finding.related[0].message


def test_gradient_clip_val_chosen_by_a_flag_is_a_warning():
    assert severities(MANUAL, "L.Trainer(gradient_clip_val=1.0 if args.clip else None)") == [Severity.WARNING]


def test_accumulate_grad_batches_under_manual_optimisation_is_an_error():
    (finding,) = fit(MANUAL, "L.Trainer(accumulate_grad_batches=4)")
    assert finding.severity is Severity.ERROR
    assert (
        "Remove `Trainer(accumulate_grad_batches=4)`" in finding.message and f"{VALIDATOR}:128-133" in finding.message
    )


def test_clipping_is_checked_before_accumulation():
    (finding,) = fit(MANUAL, "L.Trainer(gradient_clip_val=0.5, accumulate_grad_batches=2)")
    assert "gradient_clip_val=0.5" in finding.message and "accumulate" not in finding.message


@pytest.mark.parametrize(
    "trainer",
    [
        "L.Trainer(gradient_clip_val=0)",
        "L.Trainer(gradient_clip_val=0.0)",
        "L.Trainer(gradient_clip_val=None, accumulate_grad_batches=1)",
        "L.Trainer()",
        "L.Trainer(gradient_clip_val=args.clip)",  # not known
        "L.Trainer(**config)",  # not known
        "make_trainer()",  # a factory of another package: its arguments are not known
    ],
)
def test_manual_optimisation_with_a_trainer_that_does_not_clip_or_is_not_known_is_silent(trainer):
    assert fit(MANUAL, trainer) == []


def test_automatic_optimisation_may_clip_and_accumulate():
    assert fit(AUTOMATIC, "L.Trainer(gradient_clip_val=1.0, accumulate_grad_batches=4)") == []


def test_a_model_that_may_be_another_makes_it_a_warning():
    src = MANUAL + "\ntrainer = L.Trainer(gradient_clip_val=1.0)\ntrainer.fit(Model() if args.a else other())\n"
    assert [f.severity for f in pl003(src)] == [Severity.WARNING]


def test_the_trainer_of_a_factory_in_another_module_is_followed(tmp_path: Path):
    (tmp_path / "model.py").write_text(textwrap.dedent(MANUAL).lstrip())
    (tmp_path / "factory.py").write_text(
        "import lightning as L\n\ndef make():\n    return L.Trainer(accumulate_grad_batches=8)\n"
    )
    train = "from model import Model\nfrom factory import make\n\nmake().fit(Model())\n"
    (tmp_path / "train.py").write_text(train)
    (finding,) = pl003(train, str(tmp_path / "train.py"), Workspace(str(tmp_path)))
    assert finding.severity is Severity.ERROR and "accumulate_grad_batches=8" in finding.message
    assert finding.related[0].path == str(tmp_path / "factory.py")


def test_the_manual_optimisation_checks_exist_since_1_4():
    src = MANUAL + "\nL.Trainer(gradient_clip_val=1.0).fit(Model())\n"
    assert [f.severity for f in pl003(src, version="1.9.5")] == [Severity.ERROR]
    assert pl003(src, version="1.3.8") == []


# -- DeepSpeed ---------------------------------------------------------------------------------------
DEEPSPEED = "MisconfigurationException: DeepSpeed currently only supports single optimizer, single optional scheduler."


def test_two_optimizers_under_deepspeed_are_an_error():
    (finding,) = fit(TWO, 'L.Trainer(strategy="deepspeed_stage_2")')
    assert finding.severity is Severity.ERROR
    assert DEEPSPEED in finding.message and "lightning/pytorch/strategies/deepspeed.py:482-485" in finding.message
    assert "returns 2 optimizers" in finding.message and '`strategy="deepspeed_stage_2"`' in finding.message


def test_two_schedulers_under_deepspeed_are_an_error_under_automatic_optimisation_too():
    (finding,) = fit(SCHEDULERS, "L.Trainer(strategy=DeepSpeedStrategy(stage=3))")
    assert finding.severity is Severity.ERROR and "returns 2 schedulers" in finding.message


def test_a_deepspeed_subclass_is_deepspeed():
    sub = "\nclass CPUDeepSpeed(DeepSpeedStrategy):\n    def setup_environment(self):\n        pass\n"
    assert severities(TWO + sub, "L.Trainer(strategy=CPUDeepSpeed(stage=2))") == [Severity.ERROR]


def test_deepspeed_chosen_by_a_flag_is_a_warning():
    assert severities(TWO, 'L.Trainer(strategy="deepspeed" if args.ds else "ddp")') == [Severity.WARNING]


def test_two_optimizers_under_automatic_optimisation_and_deepspeed_are_reported_once_at_configure_optimizers():
    auto_two = TWO.replace("        self.automatic_optimization = False\n", "")
    (finding,) = fit(auto_two, 'L.Trainer(strategy="deepspeed")')
    assert "under automatic optimisation" in finding.message and "DeepSpeed" not in finding.message


@pytest.mark.parametrize(
    "trainer",
    [
        'L.Trainer(strategy="ddp")',
        'L.Trainer(strategy="auto")',
        "L.Trainer()",
        'L.Trainer(strategy=DeepSpeedStrategy(config={"optimizer": {"type": "Adam"}}))',  # configure_optimizers is not called
        "L.Trainer(strategy=DeepSpeedStrategy(config=args.ds_config))",  # not known
        "L.Trainer(strategy=args.strategy)",  # not known
    ],
)
def test_two_optimizers_without_deepspeed_or_with_an_unknown_strategy_are_silent(trainer):
    assert fit(TWO, trainer) == []


def test_one_optimizer_and_one_scheduler_under_deepspeed_is_silent():
    one = SCHEDULERS.replace(", torch.optim.lr_scheduler.ExponentialLR(opt, 0.9)", "")
    assert fit(one, 'L.Trainer(strategy="deepspeed")') == []


def test_deepspeed_is_reported_from_2_0():
    assert fit(TWO, 'L.Trainer(strategy="deepspeed")')
    assert pl003(TWO + '\nL.Trainer(strategy="deepspeed").fit(Model())\n', version="1.9.5") == []


def test_a_partial_and_a_kwargs_dict_are_followed():
    assert severities(
        "import functools\n" + MANUAL, "functools.partial(L.Trainer, gradient_clip_val=1.0)(max_epochs=1)"
    ) == [Severity.ERROR]
    assert severities(MANUAL + "\nkw = dict(gradient_clip_val=1.0)\n", "L.Trainer(**kw)") == [Severity.ERROR]


def test_a_trainer_subclass_whose_arguments_are_not_known_is_silent():
    sub = "\nclass MyTrainer(L.Trainer):\n    def __init__(self, cfg):\n        super().__init__(**cfg)\n"
    assert fit(MANUAL + sub, "MyTrainer(load())") == []


# -- accumulate_grad_batches of another type -----------------------------------------------------------
@pytest.mark.parametrize("value, shown", [("None", "None"), ("2.0", "2.0"), ('"2"', "2"), ("False", "False")])
def test_accumulate_grad_batches_of_another_type_under_manual_optimisation_is_an_error(value, shown):
    # `Trainer.__init__` stores it unchecked (trainer.py:443); the validator's `!= 1` refuses it
    (finding,) = fit(MANUAL, f"L.Trainer(accumulate_grad_batches={value})")
    assert finding.severity is Severity.ERROR
    assert f"Remove `Trainer(accumulate_grad_batches={shown})`" in finding.message


@pytest.mark.parametrize("value", ["1.0", "True"])
def test_accumulate_grad_batches_equal_to_1_is_silent(value):
    assert fit(MANUAL, f"L.Trainer(accumulate_grad_batches={value})") == []


def test_accumulate_grad_batches_none_under_automatic_optimisation_is_silent():
    # only the first training batch fails (`batch_idx % None`, loops/optimization/automatic.py:220): not certain
    assert fit(AUTOMATIC, "L.Trainer(accumulate_grad_batches=None)") == []


def test_accumulate_grad_batches_none_was_the_default_in_1_x():
    src = MANUAL + "\nL.Trainer(accumulate_grad_batches=None).fit(Model())\n"
    assert pl003(src, version="1.9.5") == []
    assert [f.severity for f in pl003(src.replace("None", "4"), version="1.9.5")] == [Severity.ERROR]


# -- DeepSpeed clipping by value -------------------------------------------------------------------------
BY_VALUE = "MisconfigurationException: DeepSpeed does not support clipping gradients by value."


@pytest.mark.parametrize("module", [AUTOMATIC, MANUAL])
def test_clipping_by_value_under_deepspeed_is_an_error(module):
    (finding,) = fit(module, 'L.Trainer(strategy="deepspeed_stage_2", gradient_clip_algorithm="value")')
    assert finding.severity is Severity.ERROR
    assert BY_VALUE in finding.message and "lightning/pytorch/strategies/deepspeed.py:470-471" in finding.message
    assert finding.related and "`gradient_clip_algorithm` is given here" in finding.related[0].message


@pytest.mark.parametrize(
    "trainer",
    [
        'L.Trainer(strategy=DeepSpeedStrategy(stage=3), gradient_clip_val=1.0, gradient_clip_algorithm="VALUE")',  # lowered
        'L.Trainer(strategy=DeepSpeedStrategy(config=args.ds_config), gradient_clip_algorithm="value")',  # any config
    ],
)
def test_clipping_by_value_under_any_deepspeed_is_an_error(trainer):
    assert severities(AUTOMATIC, trainer) == [Severity.ERROR]


def test_clipping_by_value_is_checked_before_deepspeeds_optimizers():
    (finding,) = fit(TWO, 'L.Trainer(strategy="deepspeed", gradient_clip_algorithm="value")')
    assert BY_VALUE in finding.message and "single optimizer" not in finding.message


def test_manual_clipping_is_checked_before_clipping_by_value():
    (finding,) = fit(MANUAL, 'L.Trainer(strategy="deepspeed", gradient_clip_val=1.0, gradient_clip_algorithm="value")')
    assert "Automatic gradient clipping" in finding.message


@pytest.mark.parametrize(
    "trainer",
    [
        'L.Trainer(strategy="deepspeed" if args.ds else "ddp", gradient_clip_algorithm="value")',
        'L.Trainer(strategy="deepspeed", gradient_clip_algorithm="value" if args.v else "norm")',
    ],
)
def test_clipping_by_value_under_deepspeed_on_some_paths_is_a_warning(trainer):
    assert severities(AUTOMATIC, trainer) == [Severity.WARNING]


@pytest.mark.parametrize(
    "trainer",
    [
        'L.Trainer(strategy="deepspeed", gradient_clip_algorithm="norm")',
        'L.Trainer(strategy="deepspeed", gradient_clip_val=1.0)',
        'L.Trainer(strategy="ddp", gradient_clip_algorithm="value")',
        'L.Trainer(gradient_clip_algorithm="value")',
        'L.Trainer(strategy=args.strategy, gradient_clip_algorithm="value")',  # the strategy is not known
        'L.Trainer(strategy="deepspeed", gradient_clip_algorithm=args.algorithm)',  # not known
        'L.Trainer(strategy="deepspeed", gradient_clip_algorithm="values")',  # Trainer(...) raises first
    ],
)
def test_clipping_by_value_without_deepspeed_or_unknown_is_silent(trainer):
    assert fit(AUTOMATIC, trainer) == []


def test_clipping_by_value_is_reported_from_2_0():
    src = AUTOMATIC + '\nL.Trainer(strategy="deepspeed", gradient_clip_algorithm="value").fit(Model())\n'
    assert [f.severity for f in pl003(src)] == [Severity.ERROR]
    assert pl003(src, version="1.9.5") == []


@pytest.mark.parametrize("method", ["validate", "test", "predict"])
def test_clipping_by_value_under_deepspeed_fails_the_other_entry_points_too(method):
    # strategies/deepspeed.py:373: `setup` calls `init_deepspeed` whatever the Trainer function
    src = (
        AUTOMATIC
        + f'\ntrainer = L.Trainer(strategy="deepspeed", gradient_clip_algorithm="value")\ntrainer.{method}(Model())\n'
    )
    (finding,) = pl003(src)
    assert (
        finding.severity is Severity.ERROR
        and BY_VALUE in finding.message
        and f"`trainer.{method}(...)` raises" in finding.message
    )


@pytest.mark.parametrize("method", ["validate", "test", "predict"])
def test_the_other_entry_points_check_nothing_else(method):
    # the validator's optimisation checks and `configure_optimizers` run in `fit` only
    src = (
        TWO + f'\nL.Trainer(strategy="deepspeed", gradient_clip_val=1.0, accumulate_grad_batches=4).{method}(Model())\n'
    )
    assert pl003(src) == []
