from fabric_lsp.cli.main import main

raise SystemExit(main())
