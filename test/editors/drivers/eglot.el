;;; eglot.el --- headless eglot driver for test/editors/eglot.test.ts  -*- lexical-binding: t -*-
;; emacs --batch -l eglot.el: loads the README config ($DSH_EDITOR_CONFIG = docs/editors/eglot.el),
;; opens $DSH_TEST_FILE, starts eglot as M-x eglot does, types `@' at the end of line 1, completes
;; with `completion-at-point' (eglot's capf), accepts the first item, runs the config's
;; `dsh-session-prepare' (workspace/executeCommand through eglot) and reports to $DSH_RESULT_FILE.
(load (expand-file-name "emacs-common.el" (file-name-directory load-file-name)) nil t)

(dsh-test-run
 (package-activate-all)                 ; as interactive startup does: Debian's elpa-markdown-mode
 (load (getenv "DSH_EDITOR_CONFIG") nil t)
 (dsh-test-put :editor (format "emacs %s eglot %s" emacs-version
                               (mapconcat #'number-to-string (cdr (assq 'eglot package--builtin-versions)) ".")))
 (find-file (getenv "DSH_TEST_FILE"))
 (dsh-test-put :majorMode (symbol-name major-mode))
 (call-interactively #'eglot)
 (dsh-test-wait "eglot to connect" #'eglot-current-server)
 (dsh-test-step "initialized")
 (dsh-test-wait-indexed
  (lambda () (eglot-execute (eglot-current-server)
                            '(:command "dshSession.candidates" :arguments [(:query "")]))))
 (goto-char (point-min))
 (end-of-line)
 (dsh-test-type "@")
 (dsh-test-complete-first)
 (dsh-test-step "accepted")
 (dsh-test-put :prepare (dsh-session-prepare))
 (dsh-test-step "prepared")
 (set-buffer-modified-p nil)
 (eglot-shutdown (eglot-current-server)))
