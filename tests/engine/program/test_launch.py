"""engine/program/launch.py: where a Fabric is launched, the first call that needs it, and evidence that the
script is run by the Fabric CLI."""

from __future__ import annotations

import ast
import textwrap

from fabric_lsp.engine.program import launch
from fabric_lsp.engine.semantic.model import SemanticModel
from fabric_lsp.engine.workspace.workspace import Workspace


def model_of(tmp_path, files: dict[str, str], name: str = "train.py") -> SemanticModel:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    ws = Workspace(root=str(tmp_path))
    module = ws.load_path(str(tmp_path / name))
    assert module is not None
    return SemanticModel(module, ws)


def calls(model: SemanticModel, attr: str) -> list[ast.Call]:
    return model.method_calls(attr)


def fabric_of(model: SemanticModel, call: ast.Call):
    fabrics, _ = model.fabrics(call.func.value)
    assert len(fabrics) == 1
    return fabrics[0]


def test_launch_in_another_module(tmp_path):
    model = model_of(
        tmp_path,
        {
            "train.py": """
                from lightning.fabric import Fabric
                from runner import run
                fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
                run(fabric)
                model = fabric.setup(model)
            """,
            "runner.py": """
                def run(fabric):
                    fabric.launch()
            """,
        },
    )
    setup = calls(model, "setup")[0]
    found, maybe = model.launches_of(fabric_of(model, setup))
    assert [m.path.endswith("runner.py") for m, _ in found] == [True]
    assert not maybe


def test_no_launch_and_an_unresolved_launch(tmp_path):
    model = model_of(
        tmp_path,
        {
            "train.py": """
                from lightning.fabric import Fabric
                fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
                model = fabric.setup(model)
            """
        },
    )
    fabric = fabric_of(model, calls(model, "setup")[0])
    assert model.launches_of(fabric) == ([], False)
    (tmp_path / "other.py").write_text("def go(thing):\n    thing.launch()\n")
    model.workspace.invalidate()
    assert model.launches_of(fabric)[1] is True


def test_launch_around_and_first_needing_launch(tmp_path):
    model = model_of(
        tmp_path,
        {
            "train.py": """
                from lightning.fabric import Fabric
                fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
                loader = fabric.setup_dataloaders(loader)
                model = fabric.setup(model)
                fabric.launch()
                fabric.barrier()
            """
        },
    )
    first = calls(model, "setup_dataloaders")[0]
    assert model.first_needing_launch(fabric_of(model, first)) is first
    assert model.launch_around(first) == (None, calls(model, "launch")[0], None, False)
    assert model.launch_around(calls(model, "barrier")[0]) == (calls(model, "launch")[0], None, None, False)


def test_cli_evidence_is_a_command_line(tmp_path):
    model = model_of(
        tmp_path,
        {"train.py": '"""Only ``fabric run`` would exempt this script; see `fabric run --help`."""\nx = 1\n'},
    )
    assert model.cli_evidence() is None
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "train.sh").write_text("#!/bin/sh\nfabric run --devices=4 --strategy=ddp train.py\n")
    launch._evidence_cache.clear()
    evidence = model.cli_evidence()
    assert evidence is not None and evidence.path.endswith("train.sh") and evidence.line == 1


def test_a_fabric_subclass_run_is_a_launch(tmp_path):
    model = model_of(
        tmp_path,
        {
            "lite.py": """
                import lightning as L

                class Lite(L.Fabric):
                    def run(self, cfg):
                        model = self.setup_module(make_model(cfg))
                        self.helper(model)

                    def helper(self, model):
                        self.barrier()
            """,
            "main.py": """
                from lite import Lite

                Lite(accelerator="cuda", devices=2, strategy="ddp").run({})
            """,
        },
        name="lite.py",
    )
    setup = calls(model, "setup_module")[0]
    assert model.in_overridden_run(setup)
    barrier = calls(model, "barrier")[0]
    assert not model.in_overridden_run(barrier)
    fabrics, _ = model.fabrics(barrier.func.value)
    found, _ = model.launches_of(fabrics[0])
    assert [m.path.endswith("main.py") for m, _ in found] == [True]


MISSING_LAUNCH = """
{doc}
import torch
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cuda", devices=4, strategy="ddp")
model = fabric.setup_module(torch.nn.Linear(2, 2))
"""


def _fab007(tmp_path, doc: str):
    from fabric_lsp.engine import Analyzer
    from fabric_lsp.rules import RULES_BY_CODE

    (tmp_path / "train.py").write_text(textwrap.dedent(MISSING_LAUNCH.format(doc=doc)).lstrip("\n"))
    launch._evidence_cache.clear()
    analyzer = Analyzer(Workspace(root=str(tmp_path)), [RULES_BY_CODE["FAB007"]])
    return analyzer.analyze((tmp_path / "train.py").read_text(), str(tmp_path / "train.py"))


def test_a_missing_launch_is_an_error_without_cli_evidence(tmp_path):
    [finding] = _fab007(tmp_path, '"""Train a model."""')
    assert finding.severity.name == "ERROR"


def test_a_script_that_says_it_runs_under_fabric_run_needs_no_launch(tmp_path):
    assert _fab007(tmp_path, '"""Run with: fabric run --accelerator=cuda --devices=4 --strategy=ddp train.py"""') == []


def test_a_readme_that_runs_this_script_with_fabric_run_means_it_needs_no_launch(tmp_path):
    (tmp_path / "README.md").write_text("```\nfabric run --devices=4 --strategy=ddp train.py\n```\n")
    assert _fab007(tmp_path, '"""Train a model."""') == []


def test_a_readme_that_runs_another_script_with_fabric_run_makes_it_a_warning(tmp_path):
    (tmp_path / "README.md").write_text("```\nfabric run --devices=4 --strategy=ddp pretrain.py\n```\n")
    [finding] = _fab007(tmp_path, '"""Train a model."""')
    assert finding.severity.name == "WARNING" and "README.md" in finding.message


def _findings(tmp_path, files: dict[str, str], name: str = "train.py"):
    from fabric_lsp.engine import Analyzer
    from fabric_lsp.rules import RULES_BY_CODE

    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    launch._evidence_cache.clear()
    analyzer = Analyzer(Workspace(root=str(tmp_path)), [RULES_BY_CODE["FAB007"]])
    return analyzer.analyze((tmp_path / name).read_text(), str(tmp_path / name))


NEVER_LAUNCHED = """
    from lightning.fabric import Fabric
    fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
    model = fabric.setup(model)
"""


def test_a_gradio_demo_launch_is_not_a_launch_of_the_fabric(tmp_path):
    app = """
        import gradio as gr
        demo = gr.Interface(fn=lambda x: x, inputs=gr.Textbox(), outputs="text")
        demo.launch()
        with gr.Blocks() as ui:
            pass
        ui.queue().launch(share=True)
    """
    [finding] = _findings(tmp_path, {"train.py": NEVER_LAUNCHED, "app.py": app})
    assert finding.severity.name == "ERROR" and "never launched" in finding.message


def test_lightnings_own_launcher_launch_is_not_a_launch_of_the_fabric(tmp_path):
    vendored = """
        class Fabric:
            def _wrap_and_launch(self, to_run, *args, **kwargs):
                if (launcher := self._strategy.launcher) is not None:
                    return launcher.launch(to_run, *args, **kwargs)
                return to_run(*args, **kwargs)

        def _call_and_handle_interrupt(trainer, trainer_fn, *args, **kwargs):
            return trainer.strategy.launcher.launch(trainer_fn, *args, trainer=trainer, **kwargs)

        class Strategy:
            def start(self, fn):
                return self._launcher.launch(fn)
    """
    [finding] = _findings(tmp_path, {"train.py": NEVER_LAUNCHED, "third_party/lightning/fabric.py": vendored})
    assert finding.severity.name == "ERROR"


def test_a_launch_on_an_unresolved_receiver_that_may_hold_the_fabric_stays_lenient(tmp_path):
    other = """
        import gradio as gr
        def go(runner):
            runner.launch()
        def start(cfg):
            cfg.fabric.launch()
        def wrapped(fabric):
            return gr.wrap(fabric).launch()
    """
    assert _findings(tmp_path, {"train.py": NEVER_LAUNCHED, "other.py": other}) == []


GETATTR_WRAPPER = """
    from lightning.fabric import Fabric

    class Runner:
        def __init__(self):
            self.fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)

        def __getattr__(self, name):
            return getattr(self.fabric, name)

    runner = Runner()
    {body}
"""


def test_calls_through_a_getattr_wrapper_are_calls_on_its_fabric(tmp_path):
    assert (
        _findings(
            tmp_path, {"train.py": GETATTR_WRAPPER.format(body="runner.launch()\n    model = runner.setup(model)")}
        )
        == []
    )
    [late] = _findings(
        tmp_path, {"train.py": GETATTR_WRAPPER.format(body="model = runner.setup(model)\n    runner.launch()")}
    )
    assert late.severity.name == "ERROR" and "comes only later" in late.message
    [never] = _findings(tmp_path, {"train.py": GETATTR_WRAPPER.format(body="model = runner.setup(model)")})
    assert never.severity.name == "ERROR" and "never launched" in never.message


def test_a_wrapper_method_of_its_own_is_not_forwarded(tmp_path):
    text = GETATTR_WRAPPER.replace(
        "        def __getattr__",
        "        def setup(self, model):\n            return model\n\n        def __getattr__",
    )
    text = text.format(body="model = runner.setup(model)")
    ast.parse(textwrap.dedent(text))
    assert _findings(tmp_path, {"train.py": text}) == []


def test_a_multi_line_fabric_run_command_is_cli_evidence(tmp_path):
    (tmp_path / "README.md").write_text(
        "```bash\nlightning run model \\\n    --accelerator=cuda \\\n    --devices=4 \\\n    train.py\n```\n"
    )
    # the command runs this very script: it is meant for the CLI, which launches it
    assert _findings(tmp_path, {"train.py": NEVER_LAUNCHED}) == []
    (tmp_path / "README.md").write_text("```\nfabric run \\\n  --devices=4 --strategy=ddp \\\n  finetune.py\n```\n")
    [finding] = _findings(tmp_path, {"train.py": NEVER_LAUNCHED})
    assert finding.severity.name == "WARNING" and "README.md" in finding.message
    assert "fabric run" in finding.message and "finetune.py" in finding.message


def test_setup_dataloaders_before_launch_with_a_function_under_spawn(tmp_path):
    text = """
        from lightning.fabric import Fabric

        def main(fabric, loader):
            model = fabric.setup(make_model())

        fabric = Fabric(accelerator="cpu", strategy="ddp_spawn", devices=2)
        loader = fabric.setup_dataloaders(make_loader())
        fabric.launch(main, loader)
    """
    [finding] = _findings(tmp_path, {"train.py": text})
    assert finding.severity.name == "ERROR" and "setup_dataloaders" in finding.message
    assert finding.span.start.line == 6


CONDITIONAL_LAUNCH = """
    import torch
    from lightning.fabric import Fabric
    fabric = Fabric({args})
    if {test}:
        fabric.launch()
    model = fabric.setup(make_model())
"""


def _conditional(tmp_path, args: str, test: str):
    return _findings(tmp_path, {"train.py": CONDITIONAL_LAUNCH.format(args=args, test=test)})


def test_a_launch_only_on_several_devices_fails_on_one_device(tmp_path):
    # DDPStrategy with one device is not exempt from _validate_launched (fabric.py:1194)
    [error] = _conditional(tmp_path, 'accelerator="cuda", strategy="ddp", devices=1', "fabric.world_size > 1")
    assert error.severity.name == "ERROR" and "world_size" in error.message
    [warning] = _conditional(tmp_path, 'accelerator="cuda", strategy="ddp", devices=1', "torch.cuda.device_count() > 1")
    assert warning.severity.name == "WARNING"
    test = "torch.cuda.is_available() and fabric.accelerator.auto_device_count() > 1"  # litgpt's api.py
    [warning] = _conditional(tmp_path, 'accelerator="cuda", strategy="ddp", devices=1', test)
    assert warning.severity.name == "WARNING" and "auto_device_count() > 1" in warning.message


def test_a_launch_on_several_devices_in_another_branch_stays_a_launch(tmp_path):
    # litgpt's api.py: the launch is in the `else` of a test the call does not share, so the call
    # may be on another path (the evaluator does not relate the two branches): as before, silent
    text = """
        import torch
        from lightning.fabric import Fabric

        def load(strategy_name, devices):
            if strategy_name != "tensor_parallel":
                fabric = Fabric(accelerator="cuda", devices=1)
            else:
                fabric = Fabric(accelerator="cuda", devices=devices, strategy="ddp")
                if torch.cuda.is_available() and fabric.accelerator.auto_device_count() > 1:
                    fabric.launch()
            if strategy_name is None:
                model = fabric.setup_module(make_model())
    """
    assert _findings(tmp_path, {"train.py": text}) == []


def test_a_launch_only_on_several_devices_is_fine_where_one_device_needs_none(tmp_path):
    # one device with the default strategy is SingleDeviceStrategy: exempt
    assert _conditional(tmp_path, 'accelerator="cuda", devices=1', "fabric.world_size > 1") == []
    assert _conditional(tmp_path, 'accelerator="cuda", strategy="ddp", devices=2', "fabric.world_size > 1") == []
    assert _conditional(tmp_path, 'accelerator="cuda", strategy="ddp", devices=1', "use_launch") == []


def test_a_wrapper_with_a_base_class_not_analysed_is_not_forwarded(tmp_path):
    # the base (here torch's) may define the name itself: Python would find it there first
    text = GETATTR_WRAPPER.replace("class Runner:", "class Runner(torch.nn.Module):").replace(
        "from lightning.fabric import Fabric", "import torch\n    from lightning.fabric import Fabric"
    )
    text = text.format(body="model = runner.setup(model)")
    ast.parse(textwrap.dedent(text))
    assert _findings(tmp_path, {"train.py": text}) == []


LAUNCH_CALLED = """
    from lightning.fabric import Fabric

    def train(fabric, cfg, steps=1):
        fabric.setup(make_model(cfg))

    def report(cfg):
        print(cfg)

    cfg = {{}}
    fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
    fabric.launch({call})
"""


def test_launch_of_a_call_with_arguments_passes_them_to_launch(tmp_path):
    from fabric_lsp.engine.findings import Applicability

    [finding] = _findings(tmp_path, {"train.py": LAUNCH_CALLED.format(call="train(fabric, cfg, steps=2)")})
    assert finding.severity.name == "ERROR" and "`launch(train, cfg, steps=2)`" in finding.message
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert [e.new_text for e in finding.fix.edits] == ["train, cfg, steps=2"]
    [other] = _findings(tmp_path, {"train.py": LAUNCH_CALLED.format(call="report(cfg)")})
    assert other.severity.name == "ERROR" and other.fix is None
    assert "`report` is not given the Fabric" in other.message and "`launch(report, cfg)`" in other.message


def test_a_launcher_script_running_the_cli_as_an_argument_list_is_evidence(tmp_path):
    (tmp_path / "launch_job.py").write_text(
        'import subprocess\nTRAIN = "/root/train.py"\n'
        'subprocess.run(["fabric", "run", "--strategy=ddp", "--devices=8", TRAIN], check=True)\n'
    )
    assert _fab007(tmp_path, '"""Train a model."""') == []  # it runs this very script
    (tmp_path / "launch_job.py").write_text(
        'import subprocess\nsubprocess.run(["fabric", "run", "--devices=8", "/root/finetune.py"], check=True)\n'
    )
    [finding] = _fab007(tmp_path, '"""Train a model."""')
    assert finding.severity.name == "WARNING" and "launch_job.py" in finding.message
    (tmp_path / "launch_job.py").write_text('import subprocess\nsubprocess.run(["python", "train.py"], check=True)\n')
    [finding] = _fab007(tmp_path, '"""Train a model."""')
    assert finding.severity.name == "ERROR"


def test_a_cli_command_does_not_cover_a_tpu_path_the_cli_cannot_launch(tmp_path):
    # `lightning run model` refuses TPUs (cli.py:205): the `--tpu` path runs without it and fails
    (tmp_path / "run.sh").write_text("lightning run model --devices=8 train.py\n")
    text = """
        import argparse
        from lightning.fabric import Fabric
        from lightning.fabric.strategies import FSDPStrategy, XLAStrategy
        p = argparse.ArgumentParser()
        p.add_argument("--tpu", action="store_true")
        a = p.parse_args()
        fabric = Fabric(devices=8, strategy=XLAStrategy() if a.tpu else FSDPStrategy())
        loader = fabric.setup_dataloaders(loader)
    """
    [finding] = _findings(tmp_path, {"train.py": text})
    assert finding.severity.name == "WARNING" and "XLAStrategy" in finding.message
    assert _findings(tmp_path, {"train.py": text.replace("XLAStrategy() if a.tpu else ", "")}) == []


def test_a_lone_fabric_is_searched_for_its_launch_only_where_a_configuration_needs_one(tmp_path, monkeypatch):
    """FAB007 judges a lone Fabric before it looks through the workspace's launch calls for one
    that may launch it: a one-device Fabric needs none, and the search (every module mentioning
    ``launch`` parsed, each receiver evaluated) is not made; a two-process one is searched for."""
    searched: list[str] = []
    original = launch.may_be_launched

    def spy(model, fabric):
        searched.append(fabric.origin.text)
        return original(model, fabric)

    monkeypatch.setattr(launch, "may_be_launched", spy)
    one = 'from lightning.fabric import Fabric\nfabric = Fabric(accelerator="cpu", devices=1)\nmodel = fabric.setup(model)\n'
    runner = "def go(app):\n    app.launch()\n"  # may launch any Fabric: the search would find it
    assert _findings(tmp_path / "one", {"train.py": one, "runner.py": runner}) == [] and searched == []
    [finding] = _findings(tmp_path / "two", {"train.py": NEVER_LAUNCHED})
    assert finding.code == "FAB007" and len(searched) == 1
    assert _findings(tmp_path / "three", {"train.py": NEVER_LAUNCHED, "runner.py": runner}) == []
