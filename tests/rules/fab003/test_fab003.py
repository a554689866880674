"""FAB003 (a non-forward method of a set-up model runs a module outside the wrapper): the engine's
questions (engine/program/model_methods.py) and the rule's verdicts, versions and fixes."""

from __future__ import annotations

import ast
import textwrap

import pytest
from fabric_lsp.engine import Analyzer, Severity
from fabric_lsp.engine.python.modules import ModuleInfo
from fabric_lsp.engine.python.text import apply_edits
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace
from fabric_lsp.rules import RULES_BY_CODE

FAB003 = RULES_BY_CODE["FAB003"]

HEAD = """\
import torch
from torch import nn
from lightning.fabric import Fabric

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 4)
        self.blocks = nn.ModuleList([nn.Linear(4, 4)])
        self.scale = 2.0
    def forward(self, x):
        return self.encoder(x)
    def embed(self, x):
        return self.encoder(x)
    def deep(self, x):
        return self.helper(x)
    def helper(self, x):
        return self.forward(x)
    def stacked(self, x):
        for block in self.blocks:
            x = block(x)
        return x
    def indexed(self, x):
        return self.blocks[0](x)
    def maybe(self, x, flag):
        if flag:
            return self.encoder(x)
        return x
    def early(self, x, flag):
        if flag:
            return x
        return self.encoder(x)
    def functional(self, x):
        return torch.nn.functional.linear(x, self.encoder.weight)
    def count(self):
        return sum(p.numel() for p in self.parameters())
    @staticmethod
    def static(x):
        return x
    @property
    def width(self):
        return 8
"""


def findings(body: str, version: str | None = None, head: str = HEAD):
    source = head + textwrap.dedent(body)
    analyzer = Analyzer(Workspace(), [FAB003], lightning_version=version)
    return source, analyzer.analyze(source)


DDP = 'fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)\nfabric.launch()\nmodel = fabric.setup(Net())\n'


@pytest.mark.parametrize(
    "call, severity",
    [
        ("model.embed(x)", Severity.ERROR),
        ("model.deep(x)", Severity.ERROR),  # through two methods to forward
        ("model.stacked(x)", Severity.ERROR),  # a loop over a ModuleList
        ("model.indexed(x)", Severity.ERROR),  # an element of a ModuleList
        ("model.maybe(x, flag)", Severity.WARNING),  # under an if
        ("model.early(x, flag)", Severity.WARNING),  # after an early return
        ("model.functional(x)", None),  # reads a parameter, calls no module
        ("model.count()", None),
        ("model.static(x)", None),  # a staticmethod is not a bound method: never wrapped
        ("model.encoder(x)", None),  # a submodule: not a method
        ("model.module.embed(x)", None),  # bypasses the wrapper on purpose
        ("model.eval()", None),  # nn.Module API, found on _FabricModule itself
        ("model.forward(x)", None),
        ("model.training_step(x)", None),  # not defined, and routed through forward anyway
        ("model.missing(x)", None),  # not found: nothing to say
    ],
)
def test_which_calls_raise_under_ddp(call, severity):
    _, found = findings(DDP + call + "\n")
    assert [f.severity for f in found] == ([severity] if severity else [])


@pytest.mark.parametrize(
    "fabric, severity",
    [
        ('Fabric(accelerator="cpu", devices=1)', None),
        ('Fabric(accelerator="cpu", strategy="dp", devices=2)', Severity.ERROR),
        ('Fabric(accelerator="cuda", strategy="fsdp", devices=2)', Severity.ERROR),
        ('Fabric(accelerator="cuda", strategy="deepspeed_stage_3", devices=2)', Severity.ERROR),
        ('Fabric(accelerator="cpu", devices=2)', Severity.ERROR),  # auto → DDP on two CPU processes
        ("Fabric()", Severity.WARNING),  # DDP on a machine with several GPUs
    ],
)
def test_which_strategies_wrap(fabric, severity):
    _, found = findings(f"fabric = {fabric}\nfabric.launch()\nmodel = fabric.setup(Net())\nmodel.embed(x)\n")
    assert [f.severity for f in found] == ([severity] if severity else [])


def test_model_parallel_leaves_the_module_unwrapped():
    body = (
        "from lightning.fabric.strategies import ModelParallelStrategy\n"
        'fabric = Fabric(accelerator="cuda", devices=2, strategy=ModelParallelStrategy(parallelize_fn=fn))\n'
        "fabric.launch()\nmodel = fabric.setup(Net())\nmodel.embed(x)\n"
    )
    assert findings(body)[1] == []


def test_a_mark_silences_the_call():
    assert findings(DDP + 'model.mark_forward_method("embed")\nmodel.embed(x)\n')[1] == []
    assert findings(DDP + "model.mark_forward_method(model.embed)\nmodel.embed(x)\n")[1] == []
    # a mark of another method does not
    assert len(findings(DDP + 'model.mark_forward_method("deep")\nmodel.embed(x)\n')[1]) == 1


@pytest.mark.parametrize(
    "version, severity, fixable",
    [
        ("2.1.3", None, False),
        ("2.2.5", Severity.ERROR, False),
        ("2.3.0", Severity.ERROR, True),
        (None, Severity.ERROR, True),
    ],
)
def test_versions(version, severity, fixable):
    _, found = findings(DDP + "model.embed(x)\n", version)
    assert [f.severity for f in found] == ([severity] if severity else [])
    if found:
        assert (found[0].fix is not None) is fixable
        if not fixable:
            assert "mark_forward_method" in found[0].message and "2.3" in found[0].message


def test_fix_after_a_tuple_setup_keeps_indentation():
    body = """
def main(fabric):
    model, optimizer = fabric.setup(
        Net(), torch.optim.SGD([], lr=0.1)
    )  # set up
    model.embed(x)

main(Fabric(accelerator="cpu", strategy="ddp", devices=2))
"""
    source, [finding] = findings(body)
    fixed = apply_edits(source, finding.fix.edits)
    assert '    )  # set up\n    model.mark_forward_method("embed")\n    model.embed(x)\n' in fixed
    ast.parse(fixed)
    assert Analyzer(Workspace(), [FAB003]).analyze(fixed) == []


def test_no_fix_where_the_setup_shares_its_line():
    body = 'fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)\nmodel = fabric.setup(Net()); y = 1\nmodel.embed(x)\n'
    [finding] = findings(body)[1]
    assert finding.fix is None and "shares its line" in finding.message


def test_torch_compile_and_a_factory_function_are_followed():
    body = """
def build():
    return Net()
fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
model = fabric.setup(torch.compile(build()))
model.stacked(x)
"""
    assert [f.severity for f in findings(body)[1]] == [Severity.ERROR]


def test_hugging_face_subclass_generate():
    head = "from transformers import GPT2LMHeadModel\nfrom lightning.fabric import Fabric\nclass LM(GPT2LMHeadModel):\n    pass\n"
    body = 'fabric = Fabric(accelerator="cuda", strategy="ddp", devices=2)\nmodel = fabric.setup(LM(config))\nmodel.generate(ids)\n'
    [finding] = findings(body, head=head)[1]
    assert finding.severity is Severity.ERROR and "calls the model itself" in finding.message
    # a library method not known to call the model
    assert findings(body.replace("generate", "resize_token_embeddings"), head=head)[1] == []


def test_model_classes_and_method_runs():
    source = HEAD + DDP
    m = ModuleInfo(source, "t.py")
    model = SemanticModel(m, Workspace())
    [setup] = model.setup_calls()
    classes, unknown = model.model_classes(setup)
    assert [c.name for c in classes] == ["Net"] and not unknown
    run = model.method_run(classes[0], "deep")
    assert run.kind == "method" and run.runs is not None and "runs `helper`" in run.runs.text
    assert model.method_run(classes[0], "width").kind == "not-method"
    assert model.method_run(classes[0], "encoder").kind == "not-method"
    assert model.method_run(classes[0], "count").runs is None


def test_a_method_of_a_submodule():
    head = HEAD + (
        "from transformers import AutoModelForCausalLM\n"
        "class Wrapper(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lm = AutoModelForCausalLM.from_pretrained('gpt2')\n"
        "        self.net = Net()\n"
        "    def generate(self, **kw):\n"
        "        return self.lm.generate(**kw)\n"
        "    def embed(self, x):\n"
        "        return self.net.embed(x)\n"
        "    def count(self):\n"
        "        return self.net.count()\n"
    )
    setup = 'fabric = Fabric(accelerator="cuda", strategy="ddp", devices=2)\nmodel = fabric.setup(Wrapper())\n'
    for call, n in (("model.generate(ids=x)", 1), ("model.embed(x)", 1), ("model.count()", 0)):
        assert len(findings(setup + call + "\n", head=head)[1]) == n, call


@pytest.mark.parametrize(
    "setup, severity",
    [
        ("model = fabric.setup(torch.compile(Net()))", Severity.ERROR),
        ("net = torch.compile(Net())\nmodel = fabric.setup(net)", Severity.ERROR),
        ("model = fabric.setup(torch.compile(Net()), _reapply_compile=False)", None),
        (
            "net = torch.compile(Net()) if fast else Net()\nmodel = fabric.setup(net)",
            None,
        ),  # a conditional expression: not followed
    ],
)
def test_a_compiled_model_is_wrapped_on_one_device(setup, severity):
    """fabric.py:272, 288-289: setup compiles the module again, so _forward_module is an OptimizedModule."""
    body = f'fabric = Fabric(accelerator="cpu", devices=1)\n{setup}\nmodel.embed(x)\n'
    found = findings(body)[1]
    assert [f.severity for f in found] == ([severity] if severity else [])
    if found:
        assert "torch.compile" in found[0].message


TOKENIZED = """\
import torch
from torch import nn
from lightning.fabric import Fabric
from transformers import AutoConfig, BertTokenizer


class Captioner(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokenizer = BertTokenizer.from_pretrained("bert-base-uncased")
        self.config = AutoConfig.from_pretrained("bert-base-uncased")
        self.encoder = nn.Linear(8, 4)
    def forward(self, x):
        return self.encoder(x)
    def prompt_length(self, prompt):
        return len(self.tokenizer(prompt).input_ids)
    def generate(self, x, prompt):
        ids = self.tokenizer(prompt, return_tensors="pt")
        return self.encoder(x), ids
"""


def test_a_tokenizer_or_a_configuration_from_pretrained_is_no_submodule():
    # FarinaMatteo/multiflow: `self.tokenizer(...)` runs no module; `self.encoder(x)` does
    _, found = findings(DDP.replace("Net()", "Captioner()") + "model.prompt_length('a')\n", head=TOKENIZED)
    assert found == []
    _, found = findings(DDP.replace("Net()", "Captioner()") + "model.generate(x, 'a')\n", head=TOKENIZED)
    assert [f.severity for f in found] == [Severity.ERROR]
    assert "self.encoder(x)" in found[0].message and "tokenizer" not in found[0].message
