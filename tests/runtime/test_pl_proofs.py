"""Runtime proof for the Trainer rules PL001-PL006: each INVALID example fails with the error
Lightning 2.6.6's Trainer raises (or, PL001, hangs until gloo's 30 s timeout), and its fixed / VALID
form runs.

Same layout and harness as ``test_rule_proofs.py`` (``rules/PL00N/<case>.py`` INVALID,
``<case>.fixed.py`` what the rule's fix must write, ``<case>.valid.py`` a hand-written VALID form;
each form prints ``RUNTIME-OK rank=N`` on every rank). The `check` and `check --fix` tests are strict
xfails while the rule is not listed by ``fabric-lsp rules``, plain tests once it is.

One CPU process per script, two gloo processes (the Trainer's subprocess launcher re-runs the
script) for PL001, whose scripts set ``DDPStrategy(timeout=timedelta(seconds=30))``.
"""

from __future__ import annotations

import re

import pytest
from test_rule_proofs import (
    GLOO_LOST_PEER,
    Case,
    assert_cases_match_folder,
    assert_fix_gives_fixed_form,
    assert_invalid_fails_and_forms_run,
    assert_reported,
    case_params,
    pending_params,
)

pytestmark = [pytest.mark.runtime, pytest.mark.timeout(1500)]  # the first test may install the venv

PL = "lightning/pytorch/"  # the sources below are under it, in lightning 2.6.6
EPOCH_END = (
    "NotImplementedError: Support for `{hook}` has been removed in v2.0.0. `Model` implements this method."
    " You can use the `on_{hook}` hook instead."
)
BEST_NO_CALLBACK = 'ValueError: `.test(ckpt_path="best")` is set but `ModelCheckpoint` is not configured.'
BEST_NOT_SAVED = (
    'ValueError: `.test(ckpt_path="best")` is set but `ModelCheckpoint` is not configured to save the best model.'
)


def _exact(message: str) -> str:
    return re.escape(message)


CASES = [
    # PL001: a collective reached on rank 0 only (DDP, 2 gloo processes, 30 s timeout). Lightning has
    # no message of its own: rank 0 (or the peer left waiting) fails with gloo's.
    Case(
        "PL001",
        "guarded_save_checkpoint",
        GLOO_LOST_PEER,
        "gloo; trainer/trainer.py:1465 (save_checkpoint's barrier)",
        ranks=2,
    ),
    Case("PL001", "guarded_all_gather", GLOO_LOST_PEER, "gloo; core/module.py:693 (strategy.all_gather)", ranks=2),
    # PL002: a monitored key that is never logged
    Case(
        "PL002",
        "checkpoint_monitor_not_logged",
        _exact(
            "MisconfigurationException: `ModelCheckpoint(monitor='val_acc')` could not find the monitored key in"
            " the returned metrics: ['val_loss', 'epoch', 'step']. HINT: Did you call `log('val_acc', value)`"
            " in the `LightningModule`?"
        ),
        "callbacks/model_checkpoint.py:582-587",
    ),
    # the callbacks of a LightningCLI's trainer_defaults (its fit subcommand written in `args`)
    Case(
        "PL002",
        "lightning_cli_early_stopping",
        _exact(
            "RuntimeError: Early stopping conditioned on metric `val_loss` which is not available. Pass in or"
            " modify your `EarlyStopping` callback to use any of the following: `val/loss`"
        ),
        "cli.py:632-655 (trainer_defaults callbacks) -> callbacks/early_stopping.py:168-175",
    ),
    Case(
        "PL002",
        "early_stopping_step_key",
        _exact(
            "RuntimeError: Early stopping conditioned on metric `val_loss_step` which is not available. Pass in or"
            " modify your `EarlyStopping` callback to use any of the following: `val_loss`, `val_loss_epoch`"
        ),
        "callbacks/early_stopping.py:168-175 (a _step key never reaches callback_metrics in validation, result.py:486)",
    ),
    # no validation loop: the default check_on_train_epoch_end checks at the training epoch's end;
    # the VALID form moves the check to a validation's end, which never comes
    Case(
        "PL002",
        "early_stopping_without_validation",
        _exact(
            "RuntimeError: Early stopping conditioned on metric `val_loss` which is not available. Pass in or"
            " modify your `EarlyStopping` callback to use any of the following: `train_loss`"
        ),
        "callbacks/early_stopping.py:135-139 (setup), :214-217, :168-175",
    ),
    Case(
        "PL002",
        "plateau_monitor_not_logged",
        _exact(
            "MisconfigurationException: ReduceLROnPlateau conditioned on metric val_acc which is not available."
            " Available metrics are: ['val_loss']. Condition can be set using `monitor` key in lr scheduler dict"
        ),
        "loops/training_epoch_loop.py:495-499",
    ),
    # PL003: the optimisation contract
    Case(
        "PL003",
        "manual_gradient_clip",
        _exact(
            "MisconfigurationException: Automatic gradient clipping is not supported for manual optimization."
            " Remove `Trainer(gradient_clip_val=1.0)` or switch to automatic optimization."
        ),
        "trainer/configuration_validator.py:123-124",
    ),
    Case(
        "PL003",
        "two_optimizers_automatic",
        _exact(
            "RuntimeError: Training with multiple optimizers is only supported with manual optimization. Set"
            " `self.automatic_optimization = False`, then access your optimizers in `training_step` with"
            " `opt1, opt2, ... = self.optimizers()`."
        ),
        "core/optimizer.py:359-360",
    ),
    Case(
        "PL003",
        "optimizer_idx",
        _exact(
            "RuntimeError: Training with multiple optimizers is only supported with manual optimization. Remove the"
            " `optimizer_idx` argument from `training_step`, set `self.automatic_optimization = False` and access"
            " your optimizers in `training_step` with `opt1, opt2, ... = self.optimizers()`."
        ),
        "core/optimizer.py:352-357",
    ),
    # DeepSpeed (the CPU test subclass of README.md, one process), manual optimisation: under automatic
    # optimisation two optimizers fail earlier, as in two_optimizers_automatic
    Case(
        "PL003",
        "deepspeed_two_optimizers",
        _exact(
            "MisconfigurationException: DeepSpeed currently only supports single optimizer, single optional scheduler."
        ),
        "strategies/deepspeed.py:482-484",
    ),
    # clipping by value: DeepSpeed's setup refuses it before it calls configure_optimizers (one optimizer here)
    Case(
        "PL003",
        "deepspeed_clip_by_value",
        _exact("MisconfigurationException: DeepSpeed does not support clipping gradients by value."),
        "strategies/deepspeed.py:470-471",
    ),
    Case(
        "PL003",
        "deepspeed_clip_by_value_validate",
        _exact("MisconfigurationException: DeepSpeed does not support clipping gradients by value."),
        "strategies/deepspeed.py:470-471 (setup, :373, runs init_deepspeed for validate too)",
    ),
    # 2.x stores accumulate_grad_batches unchecked (trainer/trainer.py:443): None != 1
    Case(
        "PL003",
        "manual_accumulate_none",
        _exact(
            "MisconfigurationException: Automatic gradient accumulation is not supported for manual optimization."
            " Remove `Trainer(accumulate_grad_batches=None)` or switch to automatic optimization."
        ),
        "trainer/configuration_validator.py:128-133",
    ),
    # PL004: API removed in 2.0
    Case(
        "PL004",
        "training_epoch_end",
        _exact(EPOCH_END.format(hook="training_epoch_end").replace("on_training", "on_train")),
        "trainer/configuration_validator.py:76-78 (fit only)",
    ),
    # a LightningCLI that fits the model (its subcommand written in `args`; jsonargparse in the venv)
    Case(
        "PL004",
        "lightning_cli_fit",
        _exact(EPOCH_END.format(hook="training_epoch_end").replace("on_training", "on_train")),
        "cli.py:750 (_run_subcommand) -> trainer/configuration_validator.py:76-78",
    ),
    Case(
        "PL004",
        "test_epoch_end",
        _exact(EPOCH_END.format(hook="test_epoch_end")),
        "trainer/configuration_validator.py:110-112 (Trainer.test only)",
    ),
    # the fixed form (accelerator="gpu", devices=1) needs a GPU: the VALID form runs it on CPU
    Case(
        "PL004",
        "trainer_gpus",
        _exact("TypeError: Trainer.__init__() got an unexpected keyword argument 'gpus'"),
        "Python's, from the keyword-only trainer/trainer.py:91 (no **kwargs)",
        fixed_runs=False,
    ),
    Case(
        "PL004",
        "load_from_checkpoint_on_instance",
        _exact(
            "TypeError: The classmethod `Model.load_from_checkpoint` cannot be called on an instance. Please call it"
            " on the class type and make sure the return value is used."
        ),
        "utilities/model_helpers.py:126-128",
    ),
    Case(
        "PL004",
        "load_from_checkpoint_through_parameter",
        _exact(
            "TypeError: The classmethod `Model.load_from_checkpoint` cannot be called on an instance. Please call it"
            " on the class type and make sure the return value is used."
        ),
        "utilities/model_helpers.py:126-128 (the instance a caller passes)",
    ),
    Case(
        "PL004",
        "argparse_classmethods",
        _exact("AttributeError: type object 'Trainer' has no attribute 'add_argparse_args'"),
        "Python's: trainer/trainer.py:89 (the 2.x class has none of 1.x's argparse classmethods)",
    ),
    Case(
        "PL004",
        "hparams_assignment",
        _exact("AttributeError: property 'hparams' of 'Model' object has no setter"),
        "Python's, core/mixins/hparams_mixin.py:166-167 (a property without a setter)",
    ),
    # PL005: ckpt_path="best" with no best checkpoint
    Case(
        "PL005",
        "best_without_checkpointing",
        _exact(BEST_NO_CALLBACK),
        "trainer/connectors/checkpoint_connector.py:166",
    ),
    Case(
        "PL005",
        "best_under_fast_dev_run",
        _exact(
            'ValueError: You cannot execute `.test(ckpt_path="best")` with `fast_dev_run=True`. Please pass an exact'
            " checkpoint path to `.test(ckpt_path=...)`"
        ),
        "trainer/connectors/checkpoint_connector.py:171-173",
    ),
    Case(
        "PL005",
        "best_without_fit",
        _exact(BEST_NOT_SAVED),
        "trainer/connectors/checkpoint_connector.py:175-177",
    ),
    # an option defaulting to "best" on a Trainer that never fits (a warning: the default's path)
    Case(
        "PL005",
        "best_option_default_without_fit",
        _exact(BEST_NOT_SAVED),
        "trainer/connectors/checkpoint_connector.py:175-177",
    ),
    # test() with no model means "best" (checkpoint_connector.py:142-143)
    Case(
        "PL005", "test_without_model", _exact(BEST_NO_CALLBACK), "trainer/connectors/checkpoint_connector.py:143 + :166"
    ),
    # PL006: a configuration the Trainer's accelerator connector rejects in __init__
    Case(
        "PL006",
        "accelerator_as_strategy",
        _exact("ValueError: You selected an invalid accelerator name: `accelerator='ddp'`. Available names are:"),
        "trainer/connectors/accelerator_connector.py:204-207",
    ),
    Case(
        "PL006",
        "strategy_none",
        _exact("ValueError: You selected an invalid strategy name: `strategy=None`."),
        "trainer/connectors/accelerator_connector.py:192-197",
    ),
    Case(
        "PL006",
        "devices_zero",
        _exact(
            "lightning.fabric.utilities.exceptions.MisconfigurationException: `Trainer(devices=0)` value is not a"
            " valid input using cpu accelerator."
        ),
        "trainer/connectors/accelerator_connector.py:325-328",
    ),
]


def test_case_list_matches_folder():
    assert_cases_match_folder(CASES, "PL")


@pytest.mark.parametrize("case", case_params(CASES))
def test_invalid_fails_and_fixed_runs(case: Case, tmp_path, start_script):
    assert_invalid_fails_and_forms_run(case, tmp_path, start_script)


@pytest.mark.parametrize("case", list(pending_params(CASES)))
def test_rule_reports_the_invalid_script(case: Case, tmp_path, fabric_lsp):
    assert_reported(case, tmp_path, fabric_lsp)


@pytest.mark.parametrize("case", list(pending_params(c for c in CASES if c.form("fixed").exists())))
def test_rule_fix_gives_the_fixed_form(case: Case, tmp_path, fabric_lsp):
    assert_fix_gives_fixed_form(case, tmp_path, fabric_lsp)
