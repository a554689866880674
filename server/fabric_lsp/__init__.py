"""fabric-lsp: catch Lightning Fabric setup misuse under DeepSpeed/XLA, and fix it."""

__version__ = "0.1.0"
