-- fabric-lsp for Neovim 0.7-0.10, without any plugin: paste into init.lua (or dofile() it).
-- On Neovim 0.11+ use lsp/fabric_lsp.lua and vim.lsp.enable("fabric_lsp") instead.
-- It starts one fabric-lsp per project root and attaches it to every Python buffer; your
-- other Python servers keep running next to it.
local root_markers = { "pyproject.toml", "setup.py", "setup.cfg", ".git" }
local uv = vim.uv or vim.loop

-- Nearest directory, upwards from the file, holding one of root_markers (else the file's own).
local function fabric_lsp_root(fname)
  local dir = vim.fn.fnamemodify(fname, ":p:h")
  local start = dir
  while true do
    for _, marker in ipairs(root_markers) do
      if uv.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return start
    end
    dir = parent
  end
end

local clients_by_root = {} -- Neovim 0.7 only: vim.lsp.start does this bookkeeping on 0.8+

vim.api.nvim_create_autocmd("FileType", {
  group = vim.api.nvim_create_augroup("fabric_lsp", { clear = true }),
  pattern = { "python", "sh" }, -- sh: batch-job scripts (FAB010)
  callback = function(args)
    local fname = vim.api.nvim_buf_get_name(args.buf)
    if fname == "" or vim.bo[args.buf].buftype ~= "" then
      return
    end
    local config = {
      name = "fabric_lsp",
      cmd = { "fabric-lsp" },
      root_dir = fabric_lsp_root(fname),
    }
    if vim.lsp.start then -- Neovim 0.8+: reuses a running client with the same name and root
      vim.lsp.start(config, { bufnr = args.buf })
    else -- Neovim 0.7
      local id = clients_by_root[config.root_dir]
      local client = id and vim.lsp.get_client_by_id(id)
      if not client or client.is_stopped() then
        id = vim.lsp.start_client(config)
        clients_by_root[config.root_dir] = id
      end
      if id then
        vim.lsp.buf_attach_client(args.buf, id)
      end
    end
  end,
})
