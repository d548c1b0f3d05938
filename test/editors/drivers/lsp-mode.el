;;; lsp-mode.el --- headless lsp-mode driver for test/editors/lsp-mode.test.ts  -*- lexical-binding: t -*-
;; emacs --batch -l lsp-mode.el: loads the README config ($DSH_EDITOR_CONFIG = docs/editors/lsp-mode.el),
;; opens $DSH_TEST_FILE, runs M-x lsp, types `@' at the end of line 1, completes with
;; `completion-at-point' (lsp-mode's capf), accepts the first item, runs the config's
;; `dsh-session-prepare' (workspace/executeCommand through lsp-mode) and reports to $DSH_RESULT_FILE.
(load (expand-file-name "emacs-common.el" (file-name-directory load-file-name)) nil t)

(dsh-test-run
 (package-activate-all)                 ; as interactive startup does: Debian's elpa-* packages
 (setq lsp-enabled-clients '(dsh-session-ls) ; no other Markdown servers looked for or offered
       lsp-enable-file-watchers nil
       lsp-completion-provider :none    ; the capf alone; no Company in batch
       lsp-keep-workspace-alive nil
       lsp-restart 'ignore)               ; never ask (it would read stdin) when the server dies
 (load (getenv "DSH_EDITOR_CONFIG") nil t)
 (dsh-test-put :editor (format "emacs %s lsp-mode %s" emacs-version (lsp-version)))
 (find-file (getenv "DSH_TEST_FILE"))
 (dsh-test-put :majorMode (symbol-name major-mode))
 (lsp-workspace-folders-add default-directory) ; answers the "import project root?" question
 (lsp)
 (dsh-test-wait "lsp-mode to initialize"
                (lambda () (let ((ws (lsp-find-workspace 'dsh-session-ls (buffer-file-name))))
                             (and ws (eq (lsp--workspace-status ws) 'initialized)))))
 (dsh-test-step "initialized")
 (dsh-test-wait-indexed
  (lambda () (with-lsp-workspace (lsp-find-workspace 'dsh-session-ls (buffer-file-name))
               (lsp-request "workspace/executeCommand"
                            '(:command "dshSession.candidates" :arguments [(:query "")])))))
 (goto-char (point-min))
 (end-of-line)
 (dsh-test-type "@")
 (dsh-test-complete-first)
 (dsh-test-step "accepted")
 (dsh-test-put :prepare (dsh-session-prepare))
 (dsh-test-step "prepared")
 (set-buffer-modified-p nil)
 (lsp-workspace-shutdown (lsp-find-workspace 'dsh-session-ls (buffer-file-name))))
