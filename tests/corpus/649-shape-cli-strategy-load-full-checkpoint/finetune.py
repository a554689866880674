import argparse

from lightning.fabric import Fabric


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=["ddp", "fsdp"], default="ddp")
    parser.add_argument("--resume", type=str, default=None)
    args = parser.parse_args()
    fabric = Fabric(accelerator="cuda", devices=8, strategy=args.strategy, precision="bf16-mixed")
    fabric.launch()
    model, optimizer = fabric.setup(build_model(), build_optimizer())
    if args.resume:
        checkpoint = fabric.load(args.resume)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    train(fabric, model, optimizer)


if __name__ == "__main__":
    main()
