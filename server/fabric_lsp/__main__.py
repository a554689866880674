from fabric_lsp.cli.main import run

run()
