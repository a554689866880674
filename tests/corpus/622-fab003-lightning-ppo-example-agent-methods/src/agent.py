import numpy as np
import torch
from torch.distributions import Categorical
from torchmetrics import MeanMetric

from lightning.pytorch import LightningModule


class PPOLightningAgent(LightningModule):
    def __init__(self, envs, act_fun="relu", vf_coef=0.5, ent_coef=0.01, clip_coef=0.2):
        super().__init__()
        act_fun = torch.nn.ReLU() if act_fun.lower() == "relu" else torch.nn.Tanh()
        self.vf_coef, self.ent_coef, self.clip_coef = vf_coef, ent_coef, clip_coef
        n_obs = np.array(envs.single_observation_space.shape).prod()
        self.critic = torch.nn.Sequential(torch.nn.Linear(n_obs, 64), act_fun, torch.nn.Linear(64, 1))
        self.actor = torch.nn.Sequential(torch.nn.Linear(n_obs, 64), act_fun, torch.nn.Linear(64, envs.single_action_space.n))
        self.avg_pg_loss = MeanMetric()

    def get_action(self, x, action=None):
        logits = self.actor(x)
        distribution = Categorical(logits=logits)
        if action is None:
            action = distribution.sample()
        return action, distribution.log_prob(action), distribution.entropy()

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        action, log_prob, entropy = self.get_action(x, action)
        value = self.get_value(x)
        return action, log_prob, entropy, value

    def forward(self, x, action=None):
        return self.get_action_and_value(x, action)

    @torch.no_grad()
    def estimate_returns_and_advantages(self, rewards, values, dones, next_obs, next_done, num_steps, gamma, gae_lambda):
        next_value = self.get_value(next_obs).reshape(1, -1)
        advantages = torch.zeros_like(rewards)
        lastgaelam = 0
        for t in reversed(range(num_steps)):
            nextnonterminal = 1.0 - (next_done if t == num_steps - 1 else dones[t + 1])
            nextvalues = next_value if t == num_steps - 1 else values[t + 1]
            delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
            advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
        return advantages + values, advantages

    def training_step(self, batch):
        _, newlogprob, entropy, newvalue = self(batch["obs"], batch["actions"].long())
        pg_loss = -(batch["advantages"] * (newlogprob - batch["logprobs"]).exp()).mean()
        self.avg_pg_loss(pg_loss)
        return pg_loss - self.ent_coef * entropy.mean()

    def on_train_epoch_end(self, global_step):
        self.logger.log_metrics({"Loss/policy_loss": self.avg_pg_loss.compute()}, global_step)
        self.avg_pg_loss.reset()

    def configure_optimizers(self, lr):
        return torch.optim.Adam(self.parameters(), lr=lr, eps=1e-4)
