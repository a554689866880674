"""FAB003's documentation and examples (the examples are also its tests)."""

from __future__ import annotations

from fabric_lsp.engine.findings import Severity
from fabric_lsp.engine.rule import Example

SUMMARY = (
    "A method other than `forward` (`model.generate(...)`) runs the model outside the strategy's wrapper "
    "without `mark_forward_method`"
)

DOC = """
## What it does
Flags `model.<name>(...)` where `model` is the result of `fabric.setup(...)` or
`fabric.setup_module(...)` (followed through the assignments of the function, `self.<attr>` in
the class, parameters at their call sites), the Fabric's strategy wraps the module (DDP, DP,
FSDP, DeepSpeed, XLAFSDP), `<name>` is a method of the model's class that **runs a module** —
it calls `self(...)`, a submodule (`self.decoder(x)`, `self.layers[i](x)`, `for block in
self.blocks: block(x)`), another method of the class that does, or a library method known to
call the model (Hugging Face `generate`) — and no `model.mark_forward_method("<name>")` marks it.

It is an **error** when every configuration the code can choose wraps the model and the
method certainly runs a module; a **warning** when one configuration wraps it (a CLI choice, a
branch, a default that depends on the machine), or when the module call is on some paths only
(under an `if`, after an early `return`), or only one of the classes the model may be runs one.
Loops count as running (a `generate` loop is there to run).

Silent: `forward` and `model(x)`; the four step methods (`training_step`, `validation_step`,
`test_step`, `predict_step`, which Lightning already routes through the wrapper); the
`nn.Module` API and `_FabricModule`'s own attributes (`parameters`, `eval`, `state_dict`, `to`,
`module`, …), which never reach the call tracker; a direct submodule call (`model.backbone(x)`:
an attribute that is a module, not a method); a helper that touches no module (it only reads
parameters or computes on tensors); `model.module.<name>(...)`, which bypasses the wrapper on
purpose; a model whose class is not known statically (nothing is reported: the method may run
no module).

## Why is this bad?
Under a wrapping strategy `fabric.setup` gives a `_FabricModule` whose `_forward_module` (the
`DistributedDataParallel`, FSDP or DeepSpeed engine) differs from the original module. A method
looked up through `_FabricModule.__getattr__` is then wrapped with a call tracker that registers a
forward hook on every submodule and raises after the method returns if any of them ran
(`lightning/fabric/wrappers.py:201-223`, applied at `wrappers.py:262`): the method bypassed the
wrapper (no gradient synchronisation, no sharded-parameter gathering, no input casting). The
error comes at the first call, often after many training steps (periodic sampling or
evaluation).

## Lightning's message
    RuntimeError: You are calling the method `Net.generate()` from outside the model. To avoid
    issues with the currently selected strategy, explicitly mark it as a forward method with
    `fabric_model.mark_forward_method('generate')` after `fabric.setup()`.

(`lightning/fabric/wrappers.py:219-223`, `_FabricModule._wrap_method_with_module_call_tracker`.)
Lightning 2.0–2.1 only warned here; 2.2 raises with no escape hatch; 2.3 added
`mark_forward_method` (`wrappers.py:165-178`), which routes the method through the wrapper's
`forward` (`wrappers.py:180-199`). The rule follows the version of Lightning installed in the
analysed environment (`lightning-version` setting): silent before 2.2, no fix before 2.3.

## Example
```python
fabric = Fabric(strategy="ddp", devices=2)
fabric.launch()
model, optimizer = fabric.setup(GPT(config), optimizer)
...
samples = model.generate(prompt, max_new_tokens=100)
```

## Use instead
```python
fabric = Fabric(strategy="ddp", devices=2)
fabric.launch()
model, optimizer = fabric.setup(GPT(config), optimizer)
model.mark_forward_method("generate")
...
samples = model.generate(prompt, max_new_tokens=100)
```

## Fix safety
The fix inserts `<model>.mark_forward_method("<name>")` on the line after the setup statement,
with the setup's own target (`model` of `model, optimizer = fabric.setup(...)`, `self.model`).
It is **safe**: this is the documented remedy, and with it the method runs through the
wrapper's `forward` (synchronised, sharded and cast as Lightning intends). It is offered only
where it is provably right: Lightning 2.3 or later (`mark_forward_method` exists), the method is
a method of the model's class (otherwise `mark_forward_method` itself raises AttributeError,
`wrappers.py:172`), and the setup statement is a plain assignment on its own line in the scope
of the call (the same function, or `self.<attr>` set in a method of the same class). A model
passed in as a parameter, or set up in another module, gets no fix (the message says why).

## Which strategies
Raises (flagged): `DDPStrategy` (`ddp`, `ddp_spawn`, `ddp_fork`, `ddp_notebook`, …),
`DataParallelStrategy` (`dp`), `FSDPStrategy`, `DeepSpeedStrategy` (every stage) and
`XLAFSDPStrategy` — their `setup_module` returns a wrapper (`strategies/ddp.py:130`,
`dp.py:64`, `fsdp.py:298`, `deepspeed.py:364`, `xla_fsdp.py:222`) — and **any** strategy, a single device
included, when the model given to `setup` is a `torch.compile` result: `setup` unwraps it and
compiles the strategy's module again (`_reapply_compile=True` by default, `fabric.py:272, 288-289`),
so `_forward_module` is an `OptimizedModule` (checked on CPU; `_reapply_compile=False` avoids it).
Silent: single-device
strategies, `XLAStrategy` and `ModelParallelStrategy`, whose `setup_module` returns the module
itself (`strategies/xla.py:147-156`, `model_parallel.py:176-191`), so no tracker is installed;
configurations in which `Fabric(...)` itself raises. Under `devices="auto"` the strategy depends
on the machine (DDP on a machine with several GPUs): a warning.
"""

VALID = [
    Example(
        "marked as a forward method",
        """
import torch
from lightning.fabric import Fabric

class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(8, 8)
    def forward(self, x):
        return self.head(x)
    def generate(self, x, steps):
        for _ in range(steps):
            x = self(x)
        return x

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
model = fabric.setup(GPT())
model.mark_forward_method("generate")
model.generate(x, 4)
""",
    ),
    Example(
        "a single device: the module is not wrapped",
        """
import torch
from lightning.fabric import Fabric

class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(8, 8)
    def generate(self, x):
        return self.head(x)

fabric = Fabric(accelerator="cpu", devices=1)
model = fabric.setup(GPT())
model.generate(x)
""",
    ),
    Example(
        "a helper that runs no module, a submodule call, the nn.Module API",
        """
import torch
from lightning.fabric import Fabric

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = torch.nn.Linear(8, 8)
    def num_params(self):
        return sum(p.numel() for p in self.parameters())

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
model, optimizer = fabric.setup(Net(), optimizer)
print(model.num_params())
features = model.backbone(x)
model.eval()
""",
    ),
    Example(
        "a step method is routed through the wrapper",
        """
import torch
from lightning.fabric import Fabric

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 8)
    def training_step(self, batch):
        return self.layer(batch).sum()

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
model, optimizer = fabric.setup(Net(), optimizer)
loss = model.training_step(batch)
""",
    ),
    Example(
        "a model whose class is not known",
        """
from lightning.fabric import Fabric
from mylib import build_model

fabric = Fabric(strategy="ddp", devices=2)
fabric.launch()
model = fabric.setup(build_model())
model.generate(x)
""",
    ),
]

INVALID = [
    Example(
        "generate() under DDP",
        """
import torch
from lightning.fabric import Fabric

class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(8, 8)
    def forward(self, x):
        return self.head(x)
    def generate(self, x, steps):
        for _ in range(steps):
            x = self(x)
        return x

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
model, optimizer = fabric.setup(GPT(), optimizer)
model.generate(x, 4)
""",
        severity=Severity.ERROR,
        fixed="""
import torch
from lightning.fabric import Fabric

class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(8, 8)
    def forward(self, x):
        return self.head(x)
    def generate(self, x, steps):
        for _ in range(steps):
            x = self(x)
        return x

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
model, optimizer = fabric.setup(GPT(), optimizer)
model.mark_forward_method("generate")
model.generate(x, 4)
""",
    ),
    Example(
        "a user-defined encode() on self.model under DeepSpeed",
        """
import torch
from lightning.fabric import Fabric

class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)
    def encode(self, x):
        return self.proj(x)

class Trainer:
    def __init__(self):
        self.fabric = Fabric(strategy="deepspeed", accelerator="cuda", devices=2)
        self.fabric.launch()
    def setup(self, optimizer):
        self.model, self.optimizer = self.fabric.setup(Encoder(), optimizer)
    def embed(self, x):
        return self.model.encode(x)
""",
        severity=Severity.ERROR,
        fixed="""
import torch
from lightning.fabric import Fabric

class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)
    def encode(self, x):
        return self.proj(x)

class Trainer:
    def __init__(self):
        self.fabric = Fabric(strategy="deepspeed", accelerator="cuda", devices=2)
        self.fabric.launch()
    def setup(self, optimizer):
        self.model, self.optimizer = self.fabric.setup(Encoder(), optimizer)
        self.model.mark_forward_method("encode")
    def embed(self, x):
        return self.model.encode(x)
""",
    ),
    Example(
        "Hugging Face generate() under FSDP",
        """
from lightning.fabric import Fabric
from transformers import AutoModelForCausalLM

fabric = Fabric(strategy="fsdp", accelerator="cuda", devices=4)
fabric.launch()
model = AutoModelForCausalLM.from_pretrained("gpt2")
model = fabric.setup_module(model)
output = model.generate(input_ids, max_new_tokens=20)
""",
        severity=Severity.ERROR,
        fixed="""
from lightning.fabric import Fabric
from transformers import AutoModelForCausalLM

fabric = Fabric(strategy="fsdp", accelerator="cuda", devices=4)
fabric.launch()
model = AutoModelForCausalLM.from_pretrained("gpt2")
model = fabric.setup_module(model)
model.mark_forward_method("generate")
output = model.generate(input_ids, max_new_tokens=20)
""",
    ),
    Example(
        "a strategy chosen on the command line",
        """
import argparse
import torch
from lightning.fabric import Fabric

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Linear(8, 4)
    def embed(self, x):
        return self.encoder(x)

parser = argparse.ArgumentParser()
parser.add_argument("--devices", type=int, choices=[1, 2], default=1)
args = parser.parse_args()
fabric = Fabric(accelerator="cpu", devices=args.devices)
fabric.launch()
model = fabric.setup(Net())
z = model.embed(x)
""",
        severity=Severity.WARNING,
        fixed="""
import argparse
import torch
from lightning.fabric import Fabric

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Linear(8, 4)
    def embed(self, x):
        return self.encoder(x)

parser = argparse.ArgumentParser()
parser.add_argument("--devices", type=int, choices=[1, 2], default=1)
args = parser.parse_args()
fabric = Fabric(accelerator="cpu", devices=args.devices)
fabric.launch()
model = fabric.setup(Net())
model.mark_forward_method("embed")
z = model.embed(x)
""",
    ),
    Example(
        "a model passed to an evaluation function: no fix there",
        """
import torch
from lightning.fabric import Fabric

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(8, 8)])
    def sample(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

def evaluate(model, x):
    return model.sample(x)

fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
fabric.launch()
net = fabric.setup(Net())
evaluate(net, x)
""",
        severity=Severity.ERROR,
    ),
]
