-- dsh-session-ls for Neovim >= 0.11: vim.lsp.config + vim.lsp.enable, no plugins.
-- CONFIGURATION ONLY: Neovim >= 0.8 cannot be installed on Debian 12, so the tests check only that
-- this file declares the server and that its cmd and init_options start it (nvim-0.7.lua is the
-- one driven end to end).
-- Install: put this in init.lua. Typing `@` in a Markdown, text or *.prompt buffer opens the menu
-- (the server's trigger character); accept a session to insert its mention, @[title](dsh-session:...).
-- :DshSessionPreview shows what the model will see for the buffer.
-- Optional environment: DSH_SESSION_LS_CMD, the server command line split on spaces (default
-- `dsh-session-ls --stdio`); DSH_SESSIONS_ROOT, the session store (default: the server's own,
-- $DSH_HOME/sessions or ~/.dsh/sessions).
local init_options = {
  sessionsRoot = vim.env.DSH_SESSIONS_ROOT,
  -- Also offer other agents' sessions (read-only; dsh reads their mentions as plain text,
  -- so send the prepared message, :DshSessionPreview):
  -- agents = { 'dsh', 'claude-code', 'codex', 'qwen-code', 'gemini', 'opencode' },
  -- Where `@` lists workspace files: 'after' the sessions (the default; a path such as @src/ lists
  -- them first), 'before' them, or 'off':
  -- fileMentions = 'before',
}
vim.lsp.config('dsh_session_ls', {
  cmd = vim.split(vim.env.DSH_SESSION_LS_CMD or 'dsh-session-ls --stdio', ' ', { trimempty = true }),
  filetypes = { 'markdown', 'text' },
  root_markers = { '.git' },
  -- An empty Lua table would be sent as a JSON array: with nothing set, send an empty object.
  init_options = next(init_options) == nil and vim.empty_dict() or init_options,
  on_attach = function(client, bufnr)
    vim.lsp.completion.enable(true, client.id, bufnr, { autotrigger = true })
  end,
})
vim.lsp.enable('dsh_session_ls')
vim.filetype.add({ extension = { prompt = 'markdown' } })

vim.api.nvim_create_user_command('DshSessionPreview', function()
  local client = vim.lsp.get_clients({ bufnr = 0, name = 'dsh_session_ls' })[1]
  if not client then return vim.notify('dsh-session-ls is not attached', vim.log.levels.ERROR) end
  local response = client:request_sync('workspace/executeCommand', {
    command = 'dshSession.prepare',
    arguments = { { textDocument = { uri = vim.uri_from_bufnr(0) } } },
  }, 10000, 0)
  if not response or response.err then
    return vim.notify('dsh-session-ls: ' .. (response and response.err.message or 'no response'), vim.log.levels.ERROR)
  end
  local text = response.result.content[1].text
  if response.result.additionalContext then
    text = text .. '\n\n' .. response.result.additionalContext.content[1].text
  end
  vim.cmd('new')
  vim.bo.buftype, vim.bo.bufhidden, vim.bo.swapfile = 'nofile', 'wipe', false
  vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo.modifiable = false
end, {})
