import sys
from pathlib import Path

import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy
from lightning.fabric.utilities.load import _lazy_load as lazy_load
from torch.distributed.fsdp.api import CPUOffload, ShardingStrategy
from transformers import HfArgumentParser, get_cosine_schedule_with_warmup
from transformers.models.mistral.modeling_mistral import MistralDecoderLayer

from genc.args import ModelArguments, TrainingArguments
from genc.trainer.load_model import load_model
from genc.trainer.lora_dpo_finetune import fit
from genc.trainer.trainer_utils import get_wrapping_policy


def main(fabric: L.Fabric, model_args: ModelArguments, training_args: TrainingArguments):
    fabric.seed_everything(training_args.seed)
    model, tokenizer = load_model(model_args.model_name_or_path, use_lora=model_args.use_lora)

    # Load model checkpoint this will load the model state dict into cpu memory
    if training_args.checkpoint_dir is not None:
        full_state_dict_model_path = Path(training_args.checkpoint_dir) / "model.ckpt"
        if isinstance(fabric.strategy, FSDPStrategy):
            fabric.load_raw(full_state_dict_model_path, model, strict=False)
        else:
            model_checkpoint = lazy_load(full_state_dict_model_path)
            model.load_state_dict(model_checkpoint, strict=False)

    model = fabric.setup_module(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=training_args.learning_rate)
    optimizer = fabric.setup_optimizers(optimizer)
    scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=training_args.warmup_steps, num_training_steps=1000)
    checkpoint_iter_num = 0
    stage = {
        "optimizer": optimizer,
        "scheduler": scheduler,
        "iter_num": checkpoint_iter_num,
    }
    if training_args.checkpoint_dir is not None:
        optim_checkpoint_path = Path(training_args.checkpoint_dir) / "optimizer.ckpt"
        if optim_checkpoint_path.exists():
            fabric.load(optim_checkpoint_path, stage, strict=True)
    fit(fabric=fabric, model=model, stage=stage, training_args=training_args)

    torch.cuda.synchronize()
    save_full_path = Path(training_args.output_dir) / "final" / "model.pt"
    print("Saving full model weights to", save_full_path)
    fabric.save(save_full_path, model)


def setup(model_args: ModelArguments, training_args: TrainingArguments):
    if training_args.nodes > 1 or training_args.devices > 1:
        if training_args.strategy == "fsdp":
            cpu_offload = CPUOffload(offload_params=True) if training_args.use_cpu_offload else None
            strategy = FSDPStrategy(
                cpu_offload=cpu_offload,
                auto_wrap_policy=get_wrapping_policy(),
                activation_checkpointing_policy={MistralDecoderLayer},
                sharding_strategy=ShardingStrategy.FULL_SHARD,
                limit_all_gathers=True,
                sync_module_states=training_args.low_memory,
            )
        else:
            strategy = training_args.strategy
    else:
        strategy = "auto"

    fabric = L.Fabric(
        accelerator="gpu",
        strategy=strategy,
        devices=training_args.devices,
        num_nodes=training_args.nodes,
        precision=training_args.precision,
    )
    fabric.launch(main, model_args=model_args, training_args=training_args)


if __name__ == "__main__":
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    if sys.argv[-1].endswith(".yaml"):
        model_args, training_args = parser.parse_yaml_file(yaml_file=sys.argv[-1])
    else:
        model_args, training_args = parser.parse_args_into_dataclasses()
    setup(model_args=model_args, training_args=training_args)
