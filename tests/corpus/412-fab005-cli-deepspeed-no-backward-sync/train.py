import argparse

import lightning as L
import torch


def main(args):
    fabric = L.Fabric(accelerator="gpu", devices=args.devices, strategy=args.strategy, precision="bf16-mixed")
    fabric.launch()
    model = torch.nn.Linear(64, 64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = fabric.setup(model, optimizer)
    for i, batch in enumerate([]):
        is_accumulating = (i + 1) % args.grad_accum != 0
        with fabric.no_backward_sync(model, enabled=is_accumulating):
            loss = model(batch).sum()
            fabric.backward(loss)
        if not is_accumulating:
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=["ddp", "deepspeed_stage_2"], default="ddp")
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--grad-accum", dest="grad_accum", type=int, default=4)
    main(parser.parse_args())
