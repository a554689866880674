import logging
import os
from pathlib import Path

import torch
from torch.distributed.fsdp import MixedPrecision
from torch.distributed.fsdp.api import CPUOffload, ShardingStrategy
import lightning as L
from lightning import seed_everything
from lightning.fabric.strategies import FSDPStrategy
from transformers import HfArgumentParser
from transformers.models.mistral.modeling_mistral import MistralDecoderLayer

from genc.trainer.trainer_utils import choose_logger, get_wrapping_policy
from genc.args import DataArguments, ModelArguments, TrainingArguments, ValidationArgument


def main(fabric: L.Fabric, data, model_args, training_args, validation_args, torch_dtype, compute_dtype):
    fabric.seed_everything(training_args.seed)
    fabric.barrier()


def setup(
    data_args: DataArguments,
    model_args: ModelArguments,
    training_args: TrainingArguments,
    validation_args: ValidationArgument,
):
    seed_everything(training_args.seed)
    data = None

    mp_policy = None
    if training_args.precision == "bf16-true":
        torch_dtype, compute_dtype = torch.bfloat16, torch.bfloat16
    elif training_args.precision == "bf16-mixed":
        compute_dtype, torch_dtype = torch.bfloat16, torch.float32
        mp_policy = MixedPrecision(param_dtype=torch.float32, reduce_dtype=torch.float32, buffer_dtype=torch.float32)
    else:
        raise ValueError("Invalid precision")
    
    strategy = training_args.strategy
    if training_args.nodes > 1 or training_args.devices > 1:
        if training_args.strategy == 'fsdp':
            cpu_offload=CPUOffload(offload_params=True) if training_args.use_cpu_offload else None,
            auto_wrap_policy = get_wrapping_policy()
            # Config sharding strategy
            if training_args.sharding_strategy == "full_shard":
                sharding_strategy = ShardingStrategy.FULL_SHARD
            elif training_args.sharding_strategy == "ddp":
                sharding_strategy = ShardingStrategy.NO_SHARD
            else:
                raise ValueError("Invalid sharding strategy")
            strategy = FSDPStrategy(
                cpu_offload=cpu_offload,
                mixed_precision=mp_policy,
                auto_wrap_policy=auto_wrap_policy,
                activation_checkpointing_policy={MistralDecoderLayer},
                sharding_strategy=sharding_strategy,
                limit_all_gathers=True, # See https://github.com/pytorch/pytorch/issues/91165
                state_dict_type="full",
                sync_module_states=training_args.low_memory,
            )
    else:
        strategy = "auto"
    
    logger_dir = Path(training_args.output_dir) / f"logs_{training_args.logger_name}"
    logger = choose_logger(training_args.logger_name, logger_dir, name="genclm", log_interval=training_args.log_interval)

    fabric = L.Fabric(
        accelerator='gpu',
        strategy=strategy,
        devices=training_args.devices,
        num_nodes=training_args.nodes,
        precision=training_args.precision,
        loggers=logger,
    )
    fabric.launch(
        main,
        data=data,
        model_args=model_args,
        training_args=training_args,
        validation_args=validation_args,
        torch_dtype=torch_dtype,
        compute_dtype=compute_dtype,
    )


if __name__=='__main__':
    torch.set_float32_matmul_precision("high")

    import argparse
    parser = argparse.ArgumentParser(
        formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument(
        "--config_file", type=str, required=True, help="Path to the yaml config file",
    )
    parser.add_argument(
        "--nodes", type=int, default=1, help="Number of nodes"
    )
    parser.add_argument(
        "--devices", type=int, default=1, help="Number of devices"
    )
    parser.add_argument(
        "--mode", type=str, default="esft", help="Training mode"
    )
    parser.add_argument(
        "--output_dir", type=str, default="output", help="Output directory"
    )

    args = parser.parse_args()
    config_file = args.config_file

    hf_parser = HfArgumentParser((DataArguments, ModelArguments, TrainingArguments, ValidationArgument))
    logging.info(f"Loading yaml config {config_file}")
    data_args, model_args, training_args, validation_args = hf_parser.parse_yaml_file(yaml_file=config_file)
    # Add read-only arguments
    training_args.nodes = args.nodes
    training_args.devices = args.devices
    training_args.mode = args.mode
    training_args.output_dir = args.output_dir
    
    setup(
        data_args=data_args,
        model_args=model_args,
        training_args=training_args,
        validation_args=validation_args,
    )
