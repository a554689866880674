-- fabric-lsp for Neovim 0.11+.
--
-- Put the folder holding this lsp/ directory on 'runtimepath' (or copy this file to
-- ~/.config/nvim/lsp/fabric_lsp.lua), then enable it from init.lua:
--
--   vim.lsp.enable("fabric_lsp")
--
-- Neovim attaches every enabled config whose filetypes match, so fabric-lsp runs next to
-- your usual Python server (pyright, basedpyright, ruff, pylsp, ...) instead of replacing it.
-- Override any field with vim.lsp.config("fabric_lsp", { ... }).
---@type vim.lsp.Config
return {
  cmd = { "fabric-lsp" },
  filetypes = { "python", "sh" }, -- sh: batch-job scripts (FAB010)
  root_markers = { "pyproject.toml", "setup.py", "setup.cfg", ".git" },
}
