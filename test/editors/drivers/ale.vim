" Headless Vim + ALE driver for test/editors/ale.test.ts, run under `script` (Vim needs a tty-like
" stdin): loads the README config ($DSH_EDITOR_CONFIG = docs/editors/ale.vim), lists the candidates
" over ALE's connection (which also starts the server), types `@` at the end of line 1 of
" $DSH_TEST_FILE, completes with the config's omnifunc (<C-x><C-o>), accepts the first item
" (<C-y>), runs the config's DshSessionPrepare, and writes its report to $DSH_RESULT_FILE.
set nocompatible nomore shortmess+=c noshowmode
filetype plugin on
packadd ale
let g:ale_completion_enabled = 0        " as-you-type completion off: the omnifunc is driven here
let g:ale_lint_on_enter = 0
let g:ale_lint_on_text_changed = 'never'

let s:result = {'steps': []}
let s:deadline_ms = 20000

function! s:Finish(ok) abort
  let s:result.ok = a:ok ? v:true : v:false
  call writefile([json_encode(s:result)], $DSH_RESULT_FILE)
  execute a:ok ? 'qa!' : 'cquit!'
endfunction

function! s:Fail(message) abort
  let s:result.error = a:message
  call s:Finish(0)
endfunction

" Channel callbacks run while Vim sleeps; wait for a script variable to be set.
function! s:WaitFor(name, what) abort
  let l:waited = 0
  while !has_key(s:, a:name)
    if l:waited > s:deadline_ms | throw 'timed out waiting for ' . a:what | endif
    sleep 20m
    let l:waited += 20
  endwhile
  return s:[a:name]
endfunction

function! s:OnCandidates(response) abort
  let s:candidates = a:response
endfunction

function! s:OnPrepared(response) abort
  let s:prepared = a:response
endfunction

" Polls for the popup menu: the omnifunc (like ALE's) gives up when typeahead is pending, so <C-y> is fed
" only once the menu is there.
function! s:AcceptWhenMenuShows(timer) abort
  if pumvisible()
    call timer_stop(a:timer)
    let s:result.menu = map(complete_info(['items']).items, {_, item -> {'label': item.abbr, 'insert': item.word}})
    call feedkeys("\<C-y>\<Esc>", 't')
  elseif reltimefloat(reltime(s:menu_started)) * 1000 > s:deadline_ms
    call timer_stop(a:timer)
    call feedkeys("\<Esc>", 't')
    let s:menu_timed_out = 1
  endif
endfunction

function! s:Main() abort
  execute 'source' fnameescape($DSH_EDITOR_CONFIG)
  let s:result.editor = 'vim ' . v:versionlong
  execute 'edit' fnameescape($DSH_TEST_FILE)
  let s:result.filetype = &filetype
  let s:result.omnifunc = &omnifunc

  " The server indexes the store in the background: wait until it lists every session.
  let l:started = reltime()
  while 1
    call DshSessionRequest(bufnr(''), 'workspace/executeCommand',
    \   {'command': 'dshSession.candidates', 'arguments': [{'query': ''}]}, function('s:OnCandidates'))
    let l:candidates = s:WaitFor('candidates', 'dshSession.candidates')
    unlet s:candidates
    if has_key(l:candidates, 'error') | throw 'dshSession.candidates: ' . l:candidates.error.message | endif
    let s:result.candidates = l:candidates.result
    if len(l:candidates.result) >= str2nr($DSH_EXPECTED_CANDIDATES) | break | endif
    if reltimefloat(reltime(l:started)) * 1000 > s:deadline_ms | throw 'timed out waiting for the server to list every session' | endif
    sleep 100m
  endwhile
  call add(s:result.steps, 'indexed')

  let s:menu_started = reltime()
  call timer_start(20, function('s:AcceptWhenMenuShows'), {'repeat': -1})
  call feedkeys("A@\<C-x>\<C-o>", 'xt!')  " '!': stay in Insert mode until the timer's keys arrive
  if exists('s:menu_timed_out') | throw 'timed out waiting for the completion menu' | endif
  let s:result.lineAfterAccept = getline(1)
  call add(s:result.steps, 'accepted')

  call DshSessionPrepare(bufnr(''), function('s:OnPrepared'))
  let l:prepared = s:WaitFor('prepared', 'dshSession.prepare')
  if has_key(l:prepared, 'error') | throw 'dshSession.prepare: ' . l:prepared.error.message | endif
  let s:result.prepare = l:prepared.result
  call add(s:result.steps, 'prepared')
  call s:Finish(1)
endfunction

function! s:Run(...) abort
  try
    call s:Main()
  catch
    call s:Fail(v:exception . ' @ ' . v:throwpoint)
  endtry
endfunction

call timer_start(0, function('s:Run'))
