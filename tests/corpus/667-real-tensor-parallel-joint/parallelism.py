from torch.distributed._composable.fsdp import fully_shard


def parallelize(model, device_mesh):
    fully_shard(model, mesh=device_mesh["data_parallel"])
    return model
