-- Headless Neovim 0.7 check of the configuration-only docs/editors/nvim-0.11.lua (Neovim >= 0.11
-- is not installable on Debian 12): runs the file against stand-ins for the 0.11-only APIs it
-- calls (vim.lsp.config, vim.lsp.enable, vim.filetype.add), then starts the declared cmd with the
-- declared init_options through 0.7's client and records the server's completion trigger characters.
local result = { steps = {} }

local function finish(ok)
  result.ok = ok
  local f = assert(io.open(vim.env.DSH_RESULT_FILE, 'w'))
  f:write(vim.json.encode(result))
  f:close()
  for _, client in pairs(vim.lsp.get_active_clients()) do client.stop() end
  vim.wait(3000, function() return #vim.lsp.get_active_clients() == 0 end, 20)
  vim.cmd(ok and 'qa!' or 'cquit!')
end

local ok, err = xpcall(function()
  local declared, enabled, filetypes_added = {}, {}, {}
  vim.lsp.config = function(name, config) declared[name] = config end
  vim.lsp.enable = function(name) table.insert(enabled, name) end
  vim.filetype = vim.filetype or {}
  vim.filetype.add = function(spec) table.insert(filetypes_added, spec) end
  dofile(vim.env.DSH_EDITOR_CONFIG)

  result.enabled = enabled
  result.filetypesAdded = filetypes_added
  result.declared = {}
  for name, config in pairs(declared) do
    result.declared[name] = { cmd = config.cmd, filetypes = config.filetypes, root_markers = config.root_markers,
      init_options = config.init_options, hasOnAttach = type(config.on_attach) == 'function' }
  end
  result.userCommand = vim.fn.exists(':DshSessionPreview') == 2

  local config = declared[enabled[1]]
  local id = vim.lsp.start_client({ name = enabled[1], cmd = config.cmd, init_options = config.init_options,
    root_dir = vim.fn.getcwd() })
  if not id then error('the declared cmd did not start') end
  local started = vim.wait(20000, function()
    local client = vim.lsp.get_client_by_id(id)
    if client == nil then error('the server exited (see ~/.cache/nvim/lsp.log)') end
    return client.initialized == true
  end, 25)
  if not started then error('timed out waiting for initialize') end
  local provider = vim.lsp.get_client_by_id(id).server_capabilities.completionProvider
  result.triggerCharacters = provider and provider.triggerCharacters
end, debug.traceback)
if not ok then result.error = err end
finish(ok)
