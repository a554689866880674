-- fabric-lsp for nvim-lspconfig users. fabric-lsp is not (yet) one of nvim-lspconfig's
-- bundled servers, so register it yourself; paste this into init.lua.
local root_markers = { "pyproject.toml", "setup.py", "setup.cfg", ".git" }

if vim.fn.has("nvim-0.11") == 1 then
  -- Neovim 0.11+: nvim-lspconfig itself only provides lsp/<name>.lua configs for
  -- vim.lsp.config; a custom server is declared the same way. Runs alongside your other
  -- Python servers.
  vim.lsp.config("fabric_lsp", {
    cmd = { "fabric-lsp" },
    filetypes = { "python", "sh" }, -- sh: batch-job scripts (FAB010)
    root_markers = root_markers,
  })
  vim.lsp.enable("fabric_lsp")
else
  -- Neovim 0.8-0.10 with the classic require("lspconfig") framework: a custom server.
  local lspconfig = require("lspconfig")
  local configs = require("lspconfig.configs")
  if not configs.fabric_lsp then
    configs.fabric_lsp = {
      default_config = {
        cmd = { "fabric-lsp" },
        filetypes = { "python", "sh" }, -- sh: batch-job scripts (FAB010)
        root_dir = lspconfig.util.root_pattern(unpack(root_markers)),
        single_file_support = true,
      },
      docs = {
        description = "fabric-lsp: catches Lightning Fabric setup misuse under DeepSpeed/XLA",
      },
    }
  end
  lspconfig.fabric_lsp.setup({})
end
