-- Headless Neovim driver for tests/editors/test_neovim.py: used as `nvim -u init.lua FILE`.
-- It configures fabric-lsp exactly as a user would (the shipped files under editors/neovim,
-- unchanged), then plays a user's session: wait for FAB001, :lua vim.lsp.buf.code_action(),
-- pick the quick fix in the menu (vim.ui.select), :write, wait for the diagnostic to go.
-- Everything observed goes to a JSON file ($FABRIC_E2E_RESULT); Python does the asserts.
--
-- Environment: FABRIC_E2E_MODE = enable | lspconfig | legacy, FABRIC_E2E_EDITORS = path to
-- editors/neovim, FABRIC_E2E_RESULT, FABRIC_E2E_TITLE, FABRIC_E2E_TIMEOUT_MS.
local mode = assert(os.getenv("FABRIC_E2E_MODE"))
local editors = assert(os.getenv("FABRIC_E2E_EDITORS"))
local result_path = assert(os.getenv("FABRIC_E2E_RESULT"))
local title = assert(os.getenv("FABRIC_E2E_TITLE"))
local timeout = tonumber(os.getenv("FABRIC_E2E_TIMEOUT_MS") or "20000")

vim.lsp.set_log_level("debug")

-- ---------------------------------------------------------------- user configuration
if mode == "enable" then
  -- Neovim 0.11+: the shipped lsp/fabric_lsp.lua found on 'runtimepath'.
  vim.opt.runtimepath:prepend(editors)
  vim.lsp.enable("fabric_lsp")
elseif mode == "lspconfig" then
  dofile(editors .. "/lspconfig.lua")
elseif mode == "legacy" then
  dofile(editors .. "/legacy.lua")
else
  error("unknown FABRIC_E2E_MODE " .. mode)
end
-- a documented snippet on top (e.g. the init_options example), as pasted into init.lua
local extra = os.getenv("FABRIC_E2E_EXTRA_LUA")
if extra and extra ~= "" then
  dofile(extra)
end
local want_severity = assert(vim.diagnostic.severity[({ error = "ERROR", warning = "WARN" })[os.getenv("FABRIC_E2E_SEVERITY") or "error"]])

-- ---------------------------------------------------------------- observation
local R = {
  nvim = vim.version and tostring(vim.version().major .. "." .. vim.version().minor .. "." .. vim.version().patch),
  mode = mode,
  steps = {},
  publishes = {},      -- raw textDocument/publishDiagnostics params, in arrival order
  requests = {},       -- client->server request methods, in order
  menu = {},           -- code-action menu entries offered by vim.ui.select
}
local function step(name)
  table.insert(R.steps, name)
end

local function write_result()
  local f = assert(io.open(result_path, "w"))
  f:write(vim.fn.json_encode(R))
  f:close()
end

-- Record raw diagnostics as the server sent them (positions in the negotiated encoding).
local orig_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, params, ctx, config)
  if params then
    table.insert(R.publishes, { uri = params.uri, version = params.version, diagnostics = params.diagnostics })
  end
  return orig_publish(err, params, ctx, config)
end

local function get_client(buf)
  if vim.lsp.get_clients then -- 0.10+
    return vim.lsp.get_clients({ bufnr = buf, name = "fabric_lsp" })[1]
  end
  for _, c in pairs(vim.lsp.buf_get_clients(buf)) do
    if c.name == "fabric_lsp" then
      return c
    end
  end
end

local function wrap_requests(client)
  local orig = client.request
  client.request = function(a, b, ...)
    -- 0.11 calls client:request(method, ...), 0.7 client.request(method, ...)
    if a == client then
      table.insert(R.requests, b)
      return orig(a, b, ...)
    end
    table.insert(R.requests, a)
    return orig(a, b, ...)
  end
end

local function fab001(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == "FAB001" then
      table.insert(out, d)
    end
  end
  return out
end

local function wait(what, cond)
  if not vim.wait(timeout, cond, 20) then
    error("timed out after " .. timeout .. " ms waiting for " .. what)
  end
end

local function buf_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, true), "\n") .. "\n"
end

-- ---------------------------------------------------------------- the session
local function session()
  local buf = vim.api.nvim_get_current_buf()
  R.filetype = vim.bo[buf].filetype
  step("opened")

  wait("fabric_lsp to attach", function() return get_client(buf) ~= nil end)
  local client = get_client(buf)
  wrap_requests(client)
  R.root_dir = client.config.root_dir
  R.server_info = client.server_info -- nil on 0.7 (it does not keep the initialize result)
  if mode == "enable" then
    local c = vim.lsp.config["fabric_lsp"]
    R.resolved_config = { cmd = c.cmd, filetypes = c.filetypes, root_markers = c.root_markers }
  end
  step("attached")

  wait("FAB001", function() return #fab001(buf) > 0 and fab001(buf)[1].severity == want_severity end)
  R.offset_encoding = client.offset_encoding
  local d = fab001(buf)[1]
  local line = vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, true)[1]
  R.diagnostic = {
    lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
    severity = d.severity, source = d.source, message = d.message,
    line = line,
    -- where the call really is, in bytes, as Neovim sees the buffer
    expected_col = (line:find("fabric.setup_optimizers", 1, true) or 0) - 1,
  }
  R.want_severity = want_severity
  step("diagnosed")

  -- The user puts the cursor on the squiggle and asks for code actions.
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  local picked = false
  vim.ui.select = function(items, opts, on_choice)
    local choice
    for i, item in ipairs(items) do
      local action = item.action or item[2] -- 0.10+: {action=, ctx=}; 0.7-0.9: {client_id, action}
      table.insert(R.menu, {
        title = action.title, kind = action.kind, has_edit = action.edit ~= nil,
        preferred = action.isPreferred == true,
      })
      if action.title == title and not choice then
        choice = i
      end
    end
    picked = true
    on_choice(choice and items[choice] or nil, choice)
  end
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  local n_publishes = #R.publishes
  if vim.fn.has("nvim-0.8") == 1 then
    vim.lsp.buf.code_action({ context = { only = { "quickfix" } } })
  else
    vim.lsp.buf.code_action({ only = { "quickfix" } })
  end
  wait("the code-action menu", function() return picked end)
  step("menu")
  wait("the quick fix to edit the buffer", function()
    return vim.api.nvim_buf_get_changedtick(buf) ~= tick
  end)
  -- one workspace edit may land as several buffer changes: let them all arrive
  vim.wait(200, function() return false end, 20)
  step("edited")

  vim.cmd("write")
  step("written")
  wait("a fresh publishDiagnostics without FAB001", function()
    for i = n_publishes + 1, #R.publishes do
      local has = false
      for _, pd in ipairs(R.publishes[i].diagnostics or {}) do
        if pd.code == "FAB001" then has = true end
      end
      if not has then return true end
    end
    return false
  end)
  wait("FAB001 to leave vim.diagnostic", function() return #fab001(buf) == 0 end)
  R.buffer_after = buf_text(buf)
  R.modified_after = vim.bo[buf].modified
  step("clean")
end

-- ---------------------------------------------------------------- FAB010 (batch-job script)
-- FABRIC_E2E_SCENARIO=fab010: the Python file (argument) is launched by $FABRIC_E2E_SCRIPT; wait
-- for FAB010 in the Python buffer, then :edit the script and wait for FAB010 on its line there.
local function diag_record(buf, d)
  return {
    lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
    severity = d.severity, source = d.source, message = d.message, code = d.code,
    line = vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, true)[1],
  }
end

local function with_code(buf, code)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == code then
      table.insert(out, d)
    end
  end
  return out
end

local function session_fab010()
  local buf = vim.api.nvim_get_current_buf()
  R.filetype = vim.bo[buf].filetype
  step("opened")
  wait("fabric_lsp to attach", function() return get_client(buf) ~= nil end)
  local client = get_client(buf)
  R.root_dir = client.config.root_dir
  R.server_info = client.server_info
  R.offset_encoding = client.offset_encoding
  if mode == "enable" then
    local c = vim.lsp.config["fabric_lsp"]
    R.resolved_config = { cmd = c.cmd, filetypes = c.filetypes, root_markers = c.root_markers }
  end
  step("attached")
  wait("FAB010 in the Python file", function() return #with_code(buf, "FAB010") > 0 end)
  R.python_diagnostics = {}
  for _, d in ipairs(with_code(buf, "FAB010")) do
    table.insert(R.python_diagnostics, diag_record(buf, d))
  end
  step("python diagnosed")

  -- the user opens the batch script in the same Neovim
  vim.cmd("edit " .. vim.fn.fnameescape(assert(os.getenv("FABRIC_E2E_SCRIPT"))))
  local sbuf = vim.api.nvim_get_current_buf()
  R.script_filetype = vim.bo[sbuf].filetype
  step("script opened")
  wait("fabric_lsp to attach to the script", function() return get_client(sbuf) ~= nil end)
  R.script_client_is_python_client = get_client(sbuf).id == client.id
  step("script attached")
  wait("FAB010 in the script", function() return #with_code(sbuf, "FAB010") > 0 end)
  R.script_diagnostics = {}
  for _, d in ipairs(with_code(sbuf, "FAB010")) do
    table.insert(R.script_diagnostics, diag_record(sbuf, d))
  end
  R.n_clients = #(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients())
  step("script diagnosed")
end

if os.getenv("FABRIC_E2E_SCENARIO") == "fab010" then
  session = session_fab010
end

vim.api.nvim_create_autocmd("VimEnter", {
  once = true,
  callback = function()
    vim.schedule(function()
      local ok, err = xpcall(session, debug.traceback)
      R.ok = ok
      if not ok then
        R.error = tostring(err)
      end
      R.lsp_log = vim.lsp.get_log_path()
      write_result()
      vim.cmd(ok and "qall!" or "cquit 1")
    end)
  end,
})
