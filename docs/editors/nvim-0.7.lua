-- dsh-session-ls for Neovim 0.7 to 0.10: the built-in LSP client, no plugins (tested on 0.7.2).
-- Install: save as ~/.config/nvim/lua/dsh_session_ls.lua and put `require('dsh_session_ls')` in init.lua.
-- Use: in a Markdown, text or *.prompt buffer type `@`, then <C-x><C-o> to pick a session;
--      :DshSessionPreview shows what the model will see for the buffer (dshSession.prepare).
-- Neovim 0.7's omnifunc keeps only items whose inserted text starts with what follows the `@`, and a
-- mention starts with `[`: complete on a bare `@` (Neovim >= 0.11, see nvim-0.11.lua, filters on titles).
-- Optional environment: DSH_SESSION_LS_CMD, the server command line split on spaces (default
-- `dsh-session-ls --stdio`); DSH_SESSIONS_ROOT, the session store (default: the server's own,
-- $DSH_HOME/sessions or ~/.dsh/sessions).
local M = {}

--- The server settings, sent as init_options.
local init_options = {
  sessionsRoot = vim.env.DSH_SESSIONS_ROOT,
  -- Also offer other agents' sessions (read-only; dsh reads their mentions as plain text,
  -- so send the prepared message, :DshSessionPreview):
  -- agents = { 'dsh', 'claude-code', 'codex', 'qwen-code', 'gemini', 'opencode' },
  -- Where `@` lists workspace files: 'after' the sessions (the default; a path such as @src/ lists
  -- them first), 'before' them, or 'off':
  -- fileMentions = 'before',
}

--- The client configuration handed to vim.lsp.start_client (root_dir is added per project).
M.config = {
  name = 'dsh-session-ls',
  cmd = vim.split(vim.env.DSH_SESSION_LS_CMD or 'dsh-session-ls --stdio', ' ', { trimempty = true }),
  -- An empty Lua table would be sent as a JSON array: with nothing set, send an empty object.
  init_options = next(init_options) == nil and vim.empty_dict() or init_options,
  on_attach = function(_, bufnr)
    vim.api.nvim_buf_set_option(bufnr, 'omnifunc', 'v:lua.vim.lsp.omnifunc')
  end,
}

M.filetypes = { 'markdown', 'text' }

-- One server per project root: the server ranks sessions recorded in that directory first.
local clients_by_root = {}

local function project_root(bufnr)
  local dir = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':p:h')
  while true do
    if vim.loop.fs_stat(dir .. '/.git') then return dir end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then return vim.fn.getcwd() end
    dir = parent
  end
end

--- Starts (once per project root) and attaches the server to a buffer; returns the client id.
function M.attach(bufnr)
  local root = project_root(bufnr)
  local id = clients_by_root[root]
  if not id or vim.lsp.get_client_by_id(id) == nil then   -- nil once it exited (and never before)
    id = vim.lsp.start_client(vim.tbl_extend('force', M.config, { root_dir = root }))
    clients_by_root[root] = id
  end
  if id then vim.lsp.buf_attach_client(bufnr, id) end
  return id
end

--- The dsh-session-ls client attached to a buffer, if any.
function M.client(bufnr)
  for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if client.name == M.config.name then return client end
  end
end

--- Runs dshSession.prepare on a buffer: the prepared message, or nil and an error message.
function M.prepare(bufnr)
  if bufnr == nil or bufnr == 0 then bufnr = vim.api.nvim_get_current_buf() end
  local client = M.client(bufnr)
  if not client then return nil, 'dsh-session-ls is not attached to this buffer' end
  local response, err = client.request_sync('workspace/executeCommand', {
    command = 'dshSession.prepare',
    arguments = { { textDocument = { uri = vim.uri_from_bufnr(bufnr) } } },
  }, 10000, bufnr)
  if not response then return nil, err or 'no response' end
  if response.err then return nil, response.err.message end
  return response.result
end

--- Opens a scratch buffer with the readable message and the context the model will see.
function M.preview()
  local prepared, err = M.prepare(0)
  if not prepared then
    vim.notify('dsh-session-ls: ' .. tostring(err), vim.log.levels.ERROR)
    return
  end
  local text = prepared.content[1].text
  if prepared.additionalContext then
    text = text .. '\n\n' .. prepared.additionalContext.content[1].text
  end
  vim.cmd('new')
  vim.bo.buftype, vim.bo.bufhidden, vim.bo.swapfile = 'nofile', 'wipe', false
  vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo.modifiable = false
end

vim.api.nvim_create_user_command('DshSessionPreview', M.preview, {})
vim.api.nvim_create_autocmd({ 'BufNewFile', 'BufRead' }, { pattern = '*.prompt', command = 'setfiletype markdown' })
vim.api.nvim_create_autocmd('FileType', {
  pattern = M.filetypes,
  callback = function(args) M.attach(args.buf) end,
})

return M
