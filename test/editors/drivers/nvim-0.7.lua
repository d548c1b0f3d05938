-- Headless Neovim 0.7 driver for test/editors/neovim.test.ts: loads the README config
-- ($DSH_EDITOR_CONFIG = docs/editors/nvim-0.7.lua), opens $DSH_TEST_FILE, waits until the server
-- lists the store's $DSH_EXPECTED_CANDIDATES sessions, types `@` at the end of line 1, completes
-- with the real omnifunc (<C-x><C-o>), accepts the first item (<C-y>), runs dshSession.prepare
-- through the client, and writes what it saw as JSON to $DSH_RESULT_FILE. Exits non-zero on failure.
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

local function guard(fn)
  return function()
    local ok, err = xpcall(fn, debug.traceback)
    if not ok then result.error = err; finish(false) end
  end
end

local function keys(k) vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(k, true, false, true), 'n', false) end

-- Fed keys run in the main loop, not inside vim.wait, so each stage waits with chained timers:
-- stages[i] = { what, ready, act }: poll ready() up to a deadline, then act(), then the next stage.
local function run_stages(stages, i)
  i = i or 1
  local stage = stages[i]
  if not stage then return finish(true) end
  local what, ready, act = stage[1], stage[2], stage[3]
  local deadline = vim.loop.hrtime() + 20000 * 1e6
  local function tick()
    if ready() then
      act()
      table.insert(result.steps, what)
      return run_stages(stages, i + 1)
    end
    if vim.loop.hrtime() > deadline then error('timed out waiting for ' .. what) end
    vim.defer_fn(guard(tick), 25)
  end
  tick()
end

guard(function()
  vim.cmd('filetype on')               -- -u runs before filetype detection is switched on
  vim.o.showmode = false
  vim.opt.shortmess:append('c')
  local dsh = dofile(vim.env.DSH_EDITOR_CONFIG)
  local v = vim.version()
  result.editor = string.format('nvim %d.%d.%d', v.major, v.minor, v.patch)

  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.DSH_TEST_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo.filetype
  local client_id = dsh.attach(bufnr)  -- already attached by the config's FileType autocmd: same id
  local expected = tonumber(vim.env.DSH_EXPECTED_CANDIDATES)

  run_stages({
    { 'initialized', function()
      if vim.lsp.get_client_by_id(client_id) == nil then error('the server exited (see ~/.cache/nvim/lsp.log)') end
      local client = dsh.client(bufnr)
      return client ~= nil and client.initialized == true
    end, function()
      result.omnifunc = vim.bo[bufnr].omnifunc   -- set by the config's on_attach
    end },
    -- The server indexes the store in the background: wait until it lists every session.
    { 'indexed', function()
      local response = dsh.client(bufnr).request_sync('workspace/executeCommand',
        { command = 'dshSession.candidates', arguments = { { query = '' } } }, 10000, bufnr)
      if response and response.err then error('dshSession.candidates: ' .. response.err.message) end
      result.candidates = response and response.result
      return type(result.candidates) == 'table' and #result.candidates >= expected
    end, function()
      keys('A@<C-x><C-o>')             -- type `@` at the end of line 1, then ask the omnifunc
    end },
    { 'menu', function() return vim.fn.pumvisible() == 1 end, function()
      result.menu = vim.tbl_map(function(item)
        return { label = item.abbr, insert = item.word }
      end, vim.fn.complete_info({ 'items' }).items)
      keys('<C-y><Esc>')               -- accept the selected (first) item, leave Insert mode
    end },
    { 'accepted', function() return vim.api.nvim_get_mode().mode == 'n' end, function()
      result.lineAfterAccept = vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1]
      local prepared, err = dsh.prepare(bufnr)
      if not prepared then error('dshSession.prepare failed: ' .. tostring(err)) end
      result.prepare = prepared
    end },
  })
end)()
