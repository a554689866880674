"""FAB005's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = "A Fabric call that DeepSpeed does not support"

DOC = """
## What it does
Flags the Fabric calls that fail (or do nothing) under `DeepSpeedStrategy`, for a Fabric whose
strategy the code can make DeepSpeed (a `"deepspeed*"` string, a `DeepSpeedStrategy(...)`
instance or subclass):

- `fabric.setup(model, opt1, opt2)` — more than one optimizer in one `setup`;
- `fabric.backward(loss)` without `model=` while the document sets up several models on that
  Fabric (`setup`/`setup_module` calls);
- `fabric.setup(model)` / `fabric.setup_module(model)` with no optimizer at ZeRO stage 1 or 2
  (the default stage of `"deepspeed"` and `DeepSpeedStrategy()` is 2) — unless the optimizers
  are set up separately afterwards, which FAB001 reports;
- `fabric.clip_gradients(...)` with `clip_val` or `max_norm`;
- `fabric.init_module(empty_init=False)` at ZeRO stage 3;
- `fabric.no_backward_sync(...)` — Lightning only warns and the context does nothing: a
  **warning** at most.

It is an **error** when every configuration the code can choose is DeepSpeed (at the stage the
check needs), a **warning** when one of them is.

## Why is this bad?
Each of these fails only at run time, after the DeepSpeed engine has been built, often on a
multi-node job. The ZeRO stage comes from the strategy string (`"deepspeed_stage_3"`), the
constructor's `stage=` constant, or the default; a `config=` can change it, so a
`DeepSpeedStrategy(...)` without a constant `stage=` has an unknown stage (never an error).

## Lightning's message
- several optimizers — `ValueError: Currently only one optimizer is supported with DeepSpeed.
  Got 2 optimizers instead.` (`lightning/fabric/strategies/deepspeed.py:348-351`)
- `backward` without `model=` — `ValueError: When using multiple models + deepspeed, please
  provide the model used to perform the optimization: self.backward(loss, model=model)`
  (`lightning/fabric/fabric.py:511-515`)
- model-only setup at ZeRO 1/2 — DeepSpeed's own `AssertionError: zero stage 2 requires an
  optimizer` (`deepspeed/runtime/engine.py:2659` in DeepSpeed 0.19.8, reached from
  `DeepSpeedStrategy.setup_module`, `strategies/deepspeed.py:357-365`)
- `clip_gradients` — `NotImplementedError: DeepSpeed handles gradient clipping automatically
  within the optimizer. Make sure to set the gradient_clipping value in your Config.`
  (`strategies/deepspeed.py:561-573`)
- `init_module(empty_init=False)` at ZeRO-3 — `NotImplementedError: empty_init=False is not a
  valid choice with DeepSpeedStrategy when ZeRO stage 3 is enabled.`
  (`strategies/deepspeed.py:377-381`)
- `no_backward_sync` — `PossibleUserWarning: The DeepSpeedStrategy does not support skipping the
  gradient synchronization. Remove .no_backward_sync() from your code or choose a different
  strategy.` (`lightning/fabric/fabric.py:777-782`)

## Example
```python
fabric = Fabric(strategy="deepspeed_stage_2")
generator, g_opt = fabric.setup(generator, g_opt)
critic, c_opt = fabric.setup(critic, c_opt)
loss = critic(generator(z)).mean()
fabric.backward(loss)
```

## Use instead
```python
fabric = Fabric(strategy="deepspeed_stage_2")
generator, g_opt = fabric.setup(generator, g_opt)
critic, c_opt = fabric.setup(critic, c_opt)
loss = critic(generator(z)).mean()
fabric.backward(loss, model=critic)
```
(set gradient clipping in the DeepSpeed config, one `setup` per model/optimizer pair, the
optimizer passed to `setup`, `init_module()` with the default `empty_init`, and no
`no_backward_sync` under DeepSpeed.)

## Fix safety
Only `backward(loss)` has a fix: it adds `model=m` when exactly one set-up model computes
`loss` (followed through the assignments of the function) and that model is called by name in
the same function; it is **safe** (with several models set up Lightning raises without it, and
`m` is the engine whose `backward` the loss needs). Where the loss comes from several set-up
models (a GAN's generator loss runs through both networks) no fix is offered: which engine
should step is the author's choice. The other checks have no automatic fix.

## Which strategies
Flagged: every `deepspeed*` strategy string and `DeepSpeedStrategy(...)` (and subclasses), at the
stage each check needs. Silent: every other strategy, the Trainer's
`lightning.pytorch.strategies.DeepSpeedStrategy` given to Fabric (a connector error, not this
rule's), configurations where `Fabric(...)` itself raises.
"""

VALID = [
    Example(
        "one optimizer per setup, model= given",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed")
gen, g_opt = fabric.setup(gen, g_opt)
disc, d_opt = fabric.setup(disc, d_opt)
fabric.backward(loss, model=disc)
""",
    ),
    Example(
        "clip_gradients under DDP",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="ddp")
model, optimizer = fabric.setup(model, optimizer)
fabric.clip_gradients(model, optimizer, max_norm=1.0)
""",
    ),
    Example(
        "model-only setup at ZeRO stage 3 (inference)",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_3")
model = fabric.setup(model)
""",
    ),
    Example(
        "empty_init=False outside ZeRO-3",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_2")
with fabric.init_module(empty_init=False):
    model = Net()
""",
    ),
    Example(
        "one model, backward without model=",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_3")
model, optimizer = fabric.setup(model, optimizer)
fabric.backward(model(x).sum())
""",
    ),
]

VALID.append(
    Example(
        "two experiments of one script, one model each",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_3")

def pretrain(encoder, opt):
    encoder, opt = fabric.setup(encoder, opt)
    fabric.backward(encoder(x).sum())

def finetune(classifier, opt):
    classifier, opt = fabric.setup(classifier, opt)
    fabric.backward(classifier(x).sum())
""",
    )
)

INVALID = [
    Example(
        "several models, backward without model=",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_3")
teacher = fabric.setup_module(teacher)
student, optimizer = fabric.setup(student, optimizer)
loss = student(x).sum()
fabric.backward(loss)
""",
        severity=Severity.ERROR,
        fixed="""
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_3")
teacher = fabric.setup_module(teacher)
student, optimizer = fabric.setup(student, optimizer)
loss = student(x).sum()
fabric.backward(loss, model=student)
""",
    ),
    Example(
        "two optimizers in one setup",
        """
import lightning as L
fabric = L.Fabric(strategy="deepspeed")
model, opt_a, opt_b = fabric.setup(model, opt_a, opt_b)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "clip_gradients when the command line can choose DeepSpeed",
        """
import sys
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed" if "--ds" in sys.argv else "ddp")
model, optimizer = fabric.setup(model, optimizer)
fabric.clip_gradients(model, optimizer, max_norm=1.0)
""",
        severity=Severity.WARNING,
    ),
    Example(
        "empty_init=False at ZeRO stage 3",
        """
from lightning.fabric import Fabric
from lightning.fabric.strategies import DeepSpeedStrategy
fabric = Fabric(strategy=DeepSpeedStrategy(stage=3))
with fabric.init_module(empty_init=False):
    model = Net()
""",
        severity=Severity.ERROR,
    ),
    Example(
        "model-only setup at ZeRO stage 2",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed_stage_2")
model = fabric.setup(model)
""",
        severity=Severity.ERROR,
    ),
    Example(
        "no_backward_sync is a no-op under DeepSpeed",
        """
from lightning.fabric import Fabric
fabric = Fabric(strategy="deepspeed")
model, optimizer = fabric.setup(model, optimizer)
with fabric.no_backward_sync(model, enabled=True):
    fabric.backward(model(x).sum())
""",
        severity=Severity.WARNING,
    ),
]
