" dsh-session-ls with ALE (tested: Vim 9.0 with ALE 3.3.0, Debian's vim-ale).
" Put in your vimrc after ALE is loaded (Debian: `packadd ale` first).
" Use: in a Markdown, text or *.prompt buffer type `@`, then <C-x><C-o>; the chosen session becomes
" its mention, @[title](dsh-session:...). :DshSessionPreview shows what the model will see.
" ALE's own omnifunc keeps only the text before the first `(` of an item, which would cut a mention
" short, so `@` tokens are completed by DshSessionComplete below, over ALE's connection to the
" server; everything else still goes to ALE's omnifunc.
" Optional environment: DSH_SESSION_LS_CMD, the server command line (default
" `dsh-session-ls --stdio`); DSH_SESSIONS_ROOT, the session store (default: the server's own,
" $DSH_HOME/sessions or ~/.dsh/sessions).
" Other agents: `let g:dsh_session_ls_agents = ['dsh', 'claude-code', 'codex', 'qwen-code', 'gemini', 'opencode']` in your vimrc also
" offers Claude Code's, Codex's, Qwen Code's, Gemini CLI's and opencode's sessions (read-only; dsh reads their mentions as plain text, so send
" the prepared message, :DshSessionPreview). `let g:dsh_session_ls_file_mentions = 'before'` lists
" workspace files before sessions on `@` ('after' them by default, 'off': none).
let g:dsh_session_ls_command = get(g:, 'dsh_session_ls_command',
\   empty($DSH_SESSION_LS_CMD) ? 'dsh-session-ls --stdio' : $DSH_SESSION_LS_CMD)
let g:dsh_session_ls_sessions_root = get(g:, 'dsh_session_ls_sessions_root', $DSH_SESSIONS_ROOT)
let g:dsh_session_ls_agents = get(g:, 'dsh_session_ls_agents', [])
let g:dsh_session_ls_file_mentions = get(g:, 'dsh_session_ls_file_mentions', '')

function! s:DshProjectRoot(buffer) abort
  let l:git = finddir('.git', fnamemodify(bufname(a:buffer), ':p:h') . ';')
  return empty(l:git) ? getcwd() : fnamemodify(l:git, ':p:h:h')
endfunction

function! s:DshInitializationOptions(buffer) abort
  let l:options = {}
  if !empty(g:dsh_session_ls_sessions_root) | let l:options.sessionsRoot = g:dsh_session_ls_sessions_root | endif
  if !empty(g:dsh_session_ls_agents) | let l:options.agents = g:dsh_session_ls_agents | endif
  if !empty(g:dsh_session_ls_file_mentions) | let l:options.fileMentions = g:dsh_session_ls_file_mentions | endif
  return l:options
endfunction

for s:filetype in ['markdown', 'text']
  call ale#linter#Define(s:filetype, {
  \   'name': 'dsh_session_ls',
  \   'lsp': 'stdio',
  \   'executable': {b -> split(g:dsh_session_ls_command)[0]},
  \   'command': {b -> g:dsh_session_ls_command},
  \   'project_root': function('s:DshProjectRoot'),
  \   'initialization_options': function('s:DshInitializationOptions'),
  \})
endfor

" ALE runs every Markdown linter unless g:ale_linters lists some, and no `text` linter unless listed.
let g:ale_linters = get(g:, 'ale_linters', {})
for s:filetype in ['markdown', 'text']
  let s:names = get(g:ale_linters, s:filetype, s:filetype is# 'text' ? [] : 'all')
  if type(s:names) == v:t_list && index(s:names, 'dsh_session_ls') < 0
    let g:ale_linters[s:filetype] = s:names + ['dsh_session_ls']
  endif
endfor

" Responses to our requests, by request id, and the handler each one goes to.
let s:dsh_handlers = {}

function! s:DshOnResponse(conn_id, response) abort
  let l:id = string(get(a:response, 'id', ''))
  if has_key(s:dsh_handlers, l:id) | call remove(s:dsh_handlers, l:id)(a:response) | endif
endfunction

" Sends a request over ALE's connection to the server (starting it if needed), after telling it
" about unsent buffer changes: ALE syncs a document only before its own requests.
function! DshSessionRequest(buffer, method, params, Handler) abort
  let l:linters = filter(ale#linter#GetAll(ale#linter#ResolveFiletype(getbufvar(a:buffer, '&filetype'))), {_, linter -> linter.name is# 'dsh_session_ls'})
  if empty(l:linters) | throw 'dsh-session-ls: no dsh_session_ls linter for this filetype' | endif
  let l:OnReady = {linter, details -> s:DshSend(details.connection_id, a:buffer, a:method, a:params, a:Handler)}
  return ale#lsp_linter#StartLSP(a:buffer, l:linters[0], l:OnReady)
endfunction

function! s:DshSend(conn_id, buffer, method, params, Handler) abort
  call ale#lsp#NotifyForChanges(a:conn_id, a:buffer)
  call ale#lsp#RegisterCallback(a:conn_id, function('s:DshOnResponse'))
  let s:dsh_handlers[string(ale#lsp#Send(a:conn_id, [0, a:method, a:params]))] = a:Handler
endfunction

" Vim's columns count bytes. The server counts UTF-8 bytes only for clients that offer
" general.positionEncodings ['utf-8'], which ALE 3.3 does not, so positions here are UTF-16 code units.
function! s:DshUtf16Length(text) abort
  let l:units = 0
  for l:char in split(a:text, '\zs')
    let l:units += char2nr(l:char) > 0xFFFF ? 2 : 1
  endfor
  return l:units
endfunction

function! s:DshOnCompletion(response) abort
  let l:result = get(a:response, 'result', v:null)
  let l:items = type(l:result) is v:t_dict ? get(l:result, 'items', []) : (type(l:result) is v:t_list ? l:result : [])
  let s:dsh_completion = map(filter(copy(l:items), {_, i -> type(get(i, 'textEdit')) is v:t_dict}),
  \   {_, i -> {'word': i.textEdit.newText, 'abbr': i.label, 'menu': get(i, 'detail', ''),
  \             'icase': 1, 'dup': 1, 'empty': 1}})
endfunction

" Omnifunc: in an `@` token (at line start or after whitespace) it asks the server for sessions and
" inserts the item's textEdit text after the `@`; elsewhere it is ALE's omnifunc.
function! DshSessionComplete(findstart, base) abort
  if a:findstart
    let l:before = strpart(getline('.'), 0, col('.') - 1)
    let l:at = match(l:before, '\%(^\|\s\)\zs@\S*$')
    let s:dsh_in_token = l:at >= 0
    if !s:dsh_in_token | return ale#completion#OmniFunc(a:findstart, a:base) | endif
    let s:dsh_completion = v:null
    call DshSessionRequest(bufnr(''), 'textDocument/completion', {
    \   'textDocument': {'uri': ale#util#ToURI(expand('#' . bufnr('') . ':p'))},
    \   'position': {'line': line('.') - 1, 'character': s:DshUtf16Length(l:before)},
    \}, function('s:DshOnCompletion'))
    return l:at + 1
  endif
  if !s:dsh_in_token | return ale#completion#OmniFunc(a:findstart, a:base) | endif
  while s:dsh_completion is v:null && !complete_check()
    sleep 5m
  endwhile
  return s:dsh_completion is v:null ? [] : s:dsh_completion
endfunction

" Runs dshSession.prepare on a buffer and calls Handler with the JSON-RPC response.
function! DshSessionPrepare(buffer, Handler) abort
  call DshSessionRequest(a:buffer, 'workspace/executeCommand', {'command': 'dshSession.prepare',
  \   'arguments': [{'textDocument': {'uri': ale#util#ToURI(expand('#' . a:buffer . ':p'))}}]}, a:Handler)
endfunction

function! s:DshShowPreview(response) abort
  if has_key(a:response, 'error')
    echoerr 'dsh-session-ls: ' . a:response.error.message
    return
  endif
  let l:text = a:response.result.content[0].text
  if has_key(a:response.result, 'additionalContext')
    let l:text .= "\n\n" . a:response.result.additionalContext.content[0].text
  endif
  new
  setlocal buftype=nofile bufhidden=wipe noswapfile
  call setline(1, split(l:text, "\n", 1))
  setlocal nomodifiable
endfunction

command! DshSessionPreview call DshSessionPrepare(bufnr(''), function('s:DshShowPreview'))

augroup dsh_session_ls
  autocmd!
  autocmd BufNewFile,BufRead *.prompt setfiletype markdown
  autocmd FileType markdown,text setlocal omnifunc=DshSessionComplete
augroup END
