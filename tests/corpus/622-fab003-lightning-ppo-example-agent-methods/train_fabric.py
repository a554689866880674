"""
Proximal Policy Optimization (PPO) - Accelerated with Lightning Fabric

Run it with:
    lightning run model --accelerator=cpu --strategy=ddp --devices=2 train_fabric.py
"""

import torch
from src.agent import PPOLightningAgent

from lightning.fabric import Fabric
from lightning.fabric.loggers import TensorBoardLogger


def train(fabric, agent, optimizer, data, global_step, args):
    for epoch in range(args.update_epochs):
        for batch_idxes in sampler:
            loss = agent.training_step({k: v[batch_idxes] for k, v in data.items()})
            optimizer.zero_grad(set_to_none=True)
            fabric.backward(loss)
            optimizer.step()
        agent.on_train_epoch_end(global_step)


def main(args):
    logger = TensorBoardLogger(root_dir="logs", name="ppo")
    fabric = Fabric(loggers=logger)
    device = fabric.device
    fabric.seed_everything(args.seed)
    agent = PPOLightningAgent(envs, act_fun=args.activation_function)
    optimizer = agent.configure_optimizers(args.learning_rate)
    agent, optimizer = fabric.setup(agent, optimizer)
    for update in range(1, num_updates + 1):
        for step in range(0, args.num_steps):
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
        returns, advantages = agent.estimate_returns_and_advantages(
            rewards, values, dones, next_obs, next_done, args.num_steps, args.gamma, args.gae_lambda
        )
        gathered_data = fabric.all_gather(local_data)
        train(fabric, agent, optimizer, gathered_data, update, args)
    if fabric.is_global_zero:
        test(agent.module, device, fabric.logger.experiment, args)


if __name__ == "__main__":
    main(parse_args())
