import torch
from torch import nn
from lightning.fabric import Fabric


class PPOActor(nn.Module):
    def __init__(self, num_in, num_act):
        super().__init__()
        self.mu = nn.Linear(num_in, num_act)
        self.log_std = nn.Parameter(torch.zeros(num_act))

    def forward(self, obs):
        return self.mu(obs)

    def eval_forward(self, obs):
        return self.mu(obs)

    def training_forward(self, obs, actions):
        mean = self.mu(obs)
        return torch.distributions.Normal(mean, self.log_std.exp()).log_prob(actions).sum(-1)


class PPO:
    def __init__(self, num_obs, num_act):
        self.fabric = Fabric(accelerator="cuda", devices=4, strategy="ddp")
        self.fabric.launch()
        self.num_obs, self.num_act = num_obs, num_act

    def setup(self):
        actor = PPOActor(self.num_obs, self.num_act)
        actor_optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4)
        self.actor, self.actor_optimizer = self.fabric.setup(actor, actor_optimizer)
        self.actor.mark_forward_method("eval_forward")
        self.actor.mark_forward_method("training_forward")

    def act(self, obs):
        with torch.no_grad():
            return self.actor.eval_forward(obs)

    def update(self, obs, actions):
        log_prob = self.actor.training_forward(obs, actions)
        loss = -log_prob.mean()
        self.actor_optimizer.zero_grad()
        self.fabric.backward(loss)
        self.actor_optimizer.step()
