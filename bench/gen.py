"""Deterministic benchmark inputs: training scripts of a given size, with or without Fabric code.

Every input is generated from a seed, so two runs (and two machines) measure the same text. A
"fabric" script sets up a DeepSpeed ZeRO-3 Fabric run with ``setup_module`` then
``setup_optimizers`` (one FAB001 finding); a "plain" script is the same program written against
bare PyTorch (no ``Fabric``, no ``setup_optimizers``: the text pre-filter applies). Both are padded
to the wanted number of lines with ordinary Python (helpers, small classes, loops, comprehensions).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass

#: The comment line after which the benchmark types; its indentation is the loop body's.
EDIT_MARKER = "# bench: typing happens below this line"
BODY_INDENT = " " * 12

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lam", "sigma", "omega", "grad", "loss", "step", "batch", "token", "layer", "head", "embed", "scale", "decay", "warm", "cool", "ratio", "total", "count", "index", "window", "stride", "shard", "rank", "world", "local", "global", "buffer", "cache", "metric", "score", "weight", "bias", "norm", "mean", "var", "std", "clip"]


def _name(rng: random.Random, prefix: str = "") -> str:
    return prefix + "_".join(rng.sample(WORDS, 2)) + f"_{rng.randrange(1000)}"


def _helper(rng: random.Random) -> list[str]:
    """One top-level helper (function or small class), 8–30 lines of plain Python."""
    kind = rng.randrange(6)
    n = _name(rng)
    a, b, c = (_name(rng) for _ in range(3))
    if kind == 0:
        return [
            f"def {n}(values: list[float], {a}: float = 0.5) -> float:",
            f'    """Exponential moving average of ``values`` with factor ``{a}``."""',
            "    result = 0.0",
            "    for i, v in enumerate(values):",
            "        if i == 0:",
            "            result = v",
            "        else:",
            f"            result = {a} * v + (1 - {a}) * result",
            "    return result",
            "",
            "",
        ]
    if kind == 1:
        return [
            f"def {n}(items: dict[str, int], {a}: int = {rng.randrange(2, 9)}) -> list[str]:",
            f"    {b} = sorted(items, key=lambda k: (-items[k], k))",
            f"    {c} = [k for k in {b} if items[k] % {a} != 0]",
            f"    if not {c}:",
            f"        return {b}[:{a}]",
            f"    return [f\"{{k}}={{items[k]}}\" for k in {c}][:{a}]",
            "",
            "",
        ]
    if kind == 2:
        cls = "".join(w.capitalize() for w in rng.sample(WORDS, 2)) + str(rng.randrange(100))
        return [
            f"class {cls}:",
            '    """Keeps running statistics of a stream (generated)."""',
            "",
            "    def __init__(self, window: int = 100) -> None:",
            "        self.window = window",
            "        self.values: list[float] = []",
            "        self.total = 0.0",
            "",
            "    def add(self, value: float) -> None:",
            "        self.values.append(value)",
            "        self.total += value",
            "        if len(self.values) > self.window:",
            "            self.total -= self.values.pop(0)",
            "",
            "    def mean(self) -> float:",
            "        return self.total / max(1, len(self.values))",
            "",
            "    def __repr__(self) -> str:",
            f"        return f\"{cls}(n={{len(self.values)}}, mean={{self.mean():.4f}})\"",
            "",
            "",
        ]
    if kind == 3:
        return [
            f"def {n}(path: str, {a}: int = {rng.randrange(1, 64)}) -> dict[str, str]:",
            f"    {b}: dict[str, str] = {{}}",
            "    try:",
            "        with open(path, encoding=\"utf-8\") as fh:",
            "            for lineno, line in enumerate(fh):",
            f"                if lineno >= {a}:",
            "                    break",
            "                key, _, value = line.partition(\"=\")",
            f"                {b}[key.strip()] = value.strip()",
            "    except OSError as exc:",
            f"        {b}[\"error\"] = str(exc)",
            f"    return {b}",
            "",
            "",
        ]
    if kind == 4:
        return [
            f"def {n}(step: int, warmup: int = {rng.randrange(10, 1000)}, total: int = {rng.randrange(1000, 100000)}) -> float:",
            "    if step < warmup:",
            "        return step / max(1, warmup)",
            "    progress = (step - warmup) / max(1, total - warmup)",
            "    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))",
            "",
            "",
        ]
    return [
        f"def {n}(rows: list[tuple[int, float]]) -> tuple[int, float]:",
        f"    {a} = 0",
        f"    {b} = 0.0",
        "    for idx, value in rows:",
        "        if value != value:  # NaN",
        "            continue",
        f"        {a} += idx",
        f"        {b} = max({b}, value)",
        f"    {c} = {{\"count\": {a}, \"peak\": {b}}}",
        f"    assert {c}[\"count\"] >= 0",
        f"    return {a}, {b}",
        "",
        "",
    ]


def _header(fabric: bool, strategy_import: bool) -> list[str]:
    lines = [
        '"""Generated training script (a benchmark input)."""',
        "",
        "from __future__ import annotations",
        "",
        "import argparse",
        "import math",
        "import os",
        "import time",
        "from dataclasses import dataclass",
        "",
        "import torch",
        "import torch.nn as nn",
        "import torch.nn.functional as F",
        "from torch.utils.data import DataLoader, Dataset",
    ]
    if fabric:
        lines.append("from lightning.fabric import Fabric")
        if strategy_import:
            lines.append("from lightning.fabric.strategies import DeepSpeedStrategy")
    lines += [
        "",
        "",
        "@dataclass",
        "class Config:",
        "    lr: float = 3e-4",
        "    batch_size: int = 32",
        "    epochs: int = 3",
        "    devices: int = 8",
        "    hidden: int = 256",
        "    vocab: int = 1000",
        "    seq_len: int = 64",
        "    log_every: int = 50",
        "",
        "",
        "class RandomTokens(Dataset):",
        "    def __init__(self, cfg: Config, size: int = 1024) -> None:",
        "        self.cfg = cfg",
        "        self.size = size",
        "",
        "    def __len__(self) -> int:",
        "        return self.size",
        "",
        "    def __getitem__(self, index: int) -> torch.Tensor:",
        "        g = torch.Generator().manual_seed(index)",
        "        return torch.randint(0, self.cfg.vocab, (self.cfg.seq_len,), generator=g)",
        "",
        "",
        "class TinyLM(nn.Module):",
        "    def __init__(self, cfg: Config) -> None:",
        "        super().__init__()",
        "        self.embed = nn.Embedding(cfg.vocab, cfg.hidden)",
        "        self.blocks = nn.ModuleList(nn.Linear(cfg.hidden, cfg.hidden) for _ in range(4))",
        "        self.head = nn.Linear(cfg.hidden, cfg.vocab)",
        "",
        "    def forward(self, tokens: torch.Tensor) -> torch.Tensor:",
        "        x = self.embed(tokens)",
        "        for block in self.blocks:",
        "            x = x + F.gelu(block(x))",
        "        return self.head(x)",
        "",
        "",
    ]
    return lines


def _main(fabric: bool, strategy_import: bool, strategy_expr: str = "") -> list[str]:
    if fabric:
        strategy = strategy_expr or ("DeepSpeedStrategy(stage=3)" if strategy_import else '"deepspeed_stage_3"')
        setup = [
            f"    fabric = Fabric(accelerator=\"cuda\", devices=cfg.devices, strategy={strategy}, precision=\"bf16-mixed\")",
            "    fabric.launch()",
            "    model = TinyLM(cfg)",
            "    model = fabric.setup_module(model)",
            "    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)",
            "    optimizer = fabric.setup_optimizers(optimizer)",
            "    loader = fabric.setup_dataloaders(DataLoader(RandomTokens(cfg), batch_size=cfg.batch_size))",
        ]
        backward = "            fabric.backward(loss)"
        log = "                fabric.print(f\"epoch {epoch} step {step} loss {loss.item():.4f}\")"
    else:
        setup = [
            "    device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")",
            "    model = TinyLM(cfg).to(device)",
            "    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)",
            "    loader = DataLoader(RandomTokens(cfg), batch_size=cfg.batch_size)",
            "    model.train()",
            "",
            "",
        ]
        backward = "            loss.backward()"
        log = "                print(f\"epoch {epoch} step {step} loss {loss.item():.4f}\")"
    return [
        "def main(cfg: Config) -> None:",
        *setup,
        "    started = time.time()",
        "    for epoch in range(cfg.epochs):",
        "        for step, tokens in enumerate(loader):",
        f"            {EDIT_MARKER}",
        "            logits = model(tokens[:, :-1])",
        "            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))",
        backward,
        "            optimizer.step()",
        "            optimizer.zero_grad()",
        "            if step % cfg.log_every == 0:",
        log,
        "    print(f\"done in {time.time() - started:.1f}s\")",
        "",
        "",
        "def parse_args() -> Config:",
        "    parser = argparse.ArgumentParser()",
        "    parser.add_argument(\"--lr\", type=float, default=3e-4)",
        "    parser.add_argument(\"--epochs\", type=int, default=3)",
        "    args = parser.parse_args()",
        "    return Config(lr=args.lr, epochs=args.epochs)",
        "",
        "",
        "if __name__ == \"__main__\":",
        "    main(parse_args())",
    ]


def training_script(n_lines: int, fabric: bool, seed: int = 0, strategy_import: bool = True, strategy_expr: str = "") -> str:
    """A script of exactly ``n_lines`` lines (the helpers sit between the model and ``main``)."""
    rng = random.Random(f"{seed}-{n_lines}-{fabric}")
    head = _header(fabric, strategy_import)
    tail = _main(fabric, strategy_import, strategy_expr)
    body: list[str] = []
    budget = n_lines - len(head) - len(tail)
    while True:
        chunk = _helper(rng)
        if len(body) + len(chunk) > budget:
            break
        body += chunk
    body += ["# padding"] * (budget - len(body))
    lines = head + body + tail
    assert len(lines) == n_lines, (len(lines), n_lines)
    return "\n".join(lines) + "\n"


def edit_position(text: str) -> tuple[int, int]:
    """(line, column) at the end of the marker comment: where typing starts."""
    for i, line in enumerate(text.split("\n")):
        if EDIT_MARKER in line:
            return i, len(line)
    raise ValueError("no edit marker")


def keystrokes(n: int, seed: int = 0) -> list[str]:
    """``n`` edits as an editor sends them while typing statements into the loop body: one
    newline-plus-indent (auto-indent) then one character per edit."""
    rng = random.Random(seed)
    out: list[str] = []
    k = 0
    while len(out) < n:
        stmt = f"tick_{k} = step * {rng.randrange(2, 99)} + epoch  # {rng.choice(WORDS)}"
        out.append("\n" + BODY_INDENT)
        out.extend(stmt)
        k += 1
    return out[:n]


def apply_keystroke(line: int, col: int, key: str) -> tuple[int, int]:
    """Cursor after inserting ``key`` at (line, col)."""
    if "\n" in key:
        return line + key.count("\n"), len(key.rsplit("\n", 1)[1])
    return line, col + len(key)


# -- the CLI tree ---------------------------------------------------------------------------------


@dataclass
class TreeInfo:
    root: str
    files: int
    fabric_files: int
    lines: int


def make_tree(root: str, n_files: int = 2000, fabric_share: float = 0.05, seed: int = 0) -> TreeInfo:
    """A project of ``n_files`` Python modules (plus an ``__init__`` and a ``config`` per package) in packages of 50, ``fabric_share`` of them Fabric
    scripts (DeepSpeed strategies, some read from a sibling ``config`` module: cross-module
    inference), the rest plain PyTorch/utility code. Sizes 40–400 lines."""
    rng = random.Random(f"tree-{seed}")
    os.makedirs(root, exist_ok=True)
    per_pkg = 50
    n_fabric = round(n_files * fabric_share)
    fabric_idx = set(rng.sample(range(n_files), n_fabric))
    written = 0
    total_lines = 0
    pkg = -1
    for i in range(n_files):
        if i % per_pkg == 0:
            pkg += 1
            pdir = os.path.join(root, f"pkg_{pkg:03d}")
            os.makedirs(pdir, exist_ok=True)
            _write(os.path.join(pdir, "__init__.py"), "")
            cfg = f'STRATEGY = "deepspeed_stage_{1 + pkg % 3}"\nDEVICES = 8\n'
            _write(os.path.join(pdir, "config.py"), cfg)
            written += 2
            total_lines += 2
        size = rng.randrange(40, 400)
        if i in fabric_idx:
            style = rng.randrange(3)
            if style == 0:
                text = training_script(max(size, 120), True, seed=i, strategy_import=True)
            elif style == 1:
                text = training_script(max(size, 120), True, seed=i, strategy_import=False)
            else:
                text = training_script(max(size, 120), True, seed=i, strategy_import=False, strategy_expr="STRATEGY")
                text = text.replace("from lightning.fabric import Fabric", f"from lightning.fabric import Fabric\nfrom pkg_{pkg:03d}.config import STRATEGY")
        elif rng.random() < 0.3:
            text = training_script(max(size, 110), False, seed=i)
        else:
            hrng = random.Random(f"h-{seed}-{i}")
            lines = ['"""Generated utility module."""', "", "import math", "", ""]
            while len(lines) < size:
                lines += _helper(hrng)
            text = "\n".join(lines) + "\n"
        _write(os.path.join(root, f"pkg_{pkg:03d}", f"mod_{i:05d}.py"), text)
        total_lines += text.count("\n")
        written += 1
    return TreeInfo(root, written, n_fabric, total_lines)


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
