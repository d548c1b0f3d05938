;;; lsp-mode.el --- dsh-session-ls with lsp-mode  -*- lexical-binding: t -*-
;; lsp-mode >= 8 (tested: lsp-mode 8.0.0 on Emacs 30.1).  Add to your init file after lsp-mode.
;; Use: M-x lsp in a Markdown or text buffer, type `@' and complete with C-M-i or your completion
;; UI; the chosen session becomes its mention, @[title](dsh-session:...).  It runs as an add-on,
;; next to another Markdown server.  M-x dsh-session-preview shows what the model will see.
;; Optional environment: DSH_SESSION_LS_CMD, the server command line (default
;; "dsh-session-ls --stdio"); DSH_SESSIONS_ROOT, the session store (default: the server's own,
;; $DSH_HOME/sessions or ~/.dsh/sessions).
;; Other agents: (setq dsh-session-ls-agents ["dsh" "claude-code" "codex" "qwen-code" "gemini" "opencode"]) also offers Claude Code's,
;; Codex's, Qwen Code's, Gemini CLI's and opencode's sessions; (setq dsh-session-ls-file-mentions "before") lists workspace files first.
(require 'lsp-mode)

(defvar dsh-session-ls-command
  (split-string (or (getenv "DSH_SESSION_LS_CMD") "dsh-session-ls --stdio"))
  "The program and arguments that start dsh-session-ls over stdio.")

(defvar dsh-session-ls-sessions-root (getenv "DSH_SESSIONS_ROOT")
  "The dsh session store, or nil for the server's default.")

(defvar dsh-session-ls-agents nil
  "Whose sessions to offer, a vector of \"dsh\", \"claude-code\", \"codex\", \"qwen-code\", \"gemini\" and \"opencode\"; nil: dsh alone.
Other agents' sessions are read-only, and dsh reads their mentions as plain text:
send the prepared message (`dsh-session-preview').")

(defvar dsh-session-ls-file-mentions nil
  "Where `@' lists workspace files: \"after\" the sessions (nil: the default), \"before\", or \"off\".")

(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection (lambda () dsh-session-ls-command))
  :activation-fn (lsp-activate-on "markdown" "plaintext") ; lsp-language-id-configuration ids
  :initialization-options
  (lambda ()
    (or (append (and dsh-session-ls-sessions-root (list :sessionsRoot dsh-session-ls-sessions-root))
                (and dsh-session-ls-agents (list :agents dsh-session-ls-agents))
                (and dsh-session-ls-file-mentions (list :fileMentions dsh-session-ls-file-mentions)))
        (make-hash-table)))             ; an empty JSON object
  :add-on? t
  :server-id 'dsh-session-ls))

(add-to-list 'auto-mode-alist
             `("\\.prompt\\'" . ,(if (fboundp 'markdown-mode) 'markdown-mode 'text-mode)))

(defun dsh-session-prepare ()
  "Run dshSession.prepare on the current buffer; return the prepared message."
  (let ((workspace (or (lsp-find-workspace 'dsh-session-ls (buffer-file-name))
                       (user-error "dsh-session-ls is not running for this buffer"))))
    (with-lsp-workspace workspace
      (lsp-request "workspace/executeCommand"
                   `(:command "dshSession.prepare"
                     :arguments [(:textDocument ,(lsp-text-document-identifier))])))))

(defun dsh-session-preview ()
  "Show the readable message and the context the model will see for this buffer."
  (interactive)
  (let* ((prepared (dsh-session-prepare))
         (context (lsp-get prepared :additionalContext)))
    (with-current-buffer (get-buffer-create "*dsh-session preview*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (lsp-get (aref (lsp-get prepared :content) 0) :text))
        (when context
          (insert "\n\n" (lsp-get (aref (lsp-get context :content) 0) :text))))
      (special-mode)
      (display-buffer (current-buffer)))))
