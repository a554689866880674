"""The command line: ``fabric-lsp check`` and the commands beside it (see :mod:`fabric_lsp.cli.main`)."""

#: the output formats of ``fabric-lsp check`` (rendered by :mod:`fabric_lsp.cli.output`); named
#: here, where ``--help`` reads them without importing the renderers
FORMATS = ("text", "json", "sarif", "github")
