-- Headless Neovim 0.7 driver for test/editors/neovim.test.ts: loads the README config
-- ($DSH_EDITOR_CONFIG = docs/editors/nvim-0.7.lua), types `@` in $DSH_TEST_FILE, completes with the
-- real omnifunc (<C-x><C-o>), accepts the first item (<C-y>), runs dshSession.prepare through the
-- client, and writes what it saw as JSON to $DSH_RESULT_FILE. Exits non-zero on any failure.
local result = { steps = {} }
local function step(name) table.insert(result.steps, name) end

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

-- Fed keys run in the main loop, not inside vim.wait, so waits are chained timers up to a deadline.
local function poll(what, cond, timeout_ms, then_fn)
  local deadline = vim.loop.hrtime() + timeout_ms * 1e6
  local function tick()
    if cond() then return then_fn() end
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
  result.editor = 'nvim ' .. tostring(vim.version().major) .. '.' .. vim.version().minor .. '.' .. vim.version().patch

  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.DSH_TEST_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo.filetype
  local client_id = dsh.attach(bufnr)   -- already attached by the config's FileType autocmd: same id
  poll('the server to initialize', function()
    if vim.lsp.get_client_by_id(client_id) == nil then error('the server exited (see ~/.cache/nvim/lsp.log)') end
    local client = dsh.client(bufnr)
    return client ~= nil and client.initialized == true
  end, 20000, guard(function()
    step('initialized')
    result.omnifunc = vim.bo.omnifunc
    keys('A@<C-x><C-o>')               -- type `@` at the end of line 1, then ask the omnifunc
    poll('the completion menu', function() return vim.fn.pumvisible() == 1 end, 15000, guard(function()
      step('menu')
      result.menu = vim.tbl_map(function(item)
        return { label = item.abbr, insert = item.word }
      end, vim.fn.complete_info({ 'items' }).items)
      keys('<C-y><Esc>')               -- accept the selected (first) item, leave Insert mode
      poll('Normal mode', function() return vim.api.nvim_get_mode().mode == 'n' end, 5000, guard(function()
        result.lineAfterAccept = vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1]
        local prepared, err = dsh.prepare(bufnr)
        if not prepared then error('dshSession.prepare failed: ' .. tostring(err)) end
        result.prepare = prepared
        step('prepared')
        finish(true)
      end))
    end))
  end))
end)()
