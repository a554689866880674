def setup_module(fabric, model, optimizer):
    """Joint setup, as DeepSpeed requires."""
    model, optimizer = fabric.setup(model, optimizer)
    return model, optimizer
