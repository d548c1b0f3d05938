;;; eglot.el --- dsh-session-ls with eglot  -*- lexical-binding: t -*-
;; Emacs >= 29 (eglot built in; tested with Emacs 30.1 and eglot 1.17.30).  Add to your init file.
;; Use: M-x eglot in a Markdown or text buffer (or `eglot-ensure' on their hooks), type `@' and
;; complete with C-M-i or your completion UI (Corfu, Company); the chosen session becomes its
;; mention, @[title](dsh-session:...).  M-x dsh-session-preview shows what the model will see.
;; eglot runs one server per buffer: this replaces another Markdown server (e.g. marksman) there.
;; Optional environment: DSH_SESSION_LS_CMD, the server command line (default
;; "dsh-session-ls --stdio"); DSH_SESSIONS_ROOT, the session store (default: the server's own,
;; $DSH_HOME/sessions or ~/.dsh/sessions).
;; Other agents: (setq dsh-session-ls-agents ["dsh" "claude-code" "codex" "qwen-code" "gemini" "opencode"]) also offers Claude Code's,
;; Codex's, Qwen Code's, Gemini CLI's and opencode's sessions; (setq dsh-session-ls-file-mentions "before") lists workspace files first.
(require 'eglot)

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

(defun dsh-session-ls-initialization-options (_server)
  "The initializationOptions: the settings that are set."
  (or (append (and dsh-session-ls-sessions-root (list :sessionsRoot dsh-session-ls-sessions-root))
              (and dsh-session-ls-agents (list :agents dsh-session-ls-agents))
              (and dsh-session-ls-file-mentions (list :fileMentions dsh-session-ls-file-mentions)))
      (make-hash-table)))               ; an empty JSON object

(add-to-list 'eglot-server-programs
             `((markdown-mode gfm-mode text-mode)
               . (,@dsh-session-ls-command
                  :initializationOptions dsh-session-ls-initialization-options)))

(add-to-list 'auto-mode-alist
             `("\\.prompt\\'" . ,(if (fboundp 'markdown-mode) 'markdown-mode 'text-mode)))

(defun dsh-session-prepare ()
  "Run dshSession.prepare on the current buffer; return the prepared message (a plist)."
  (let ((server (or (eglot-current-server) (user-error "No eglot server in this buffer")))
        (params `(:command "dshSession.prepare"
                  :arguments [(:textDocument ,(eglot--TextDocumentIdentifier))])))
    (if (fboundp 'eglot-execute)        ; Emacs 30; eglot-execute-command before
        (eglot-execute server params)
      (with-no-warnings
        (eglot-execute-command server "dshSession.prepare" (plist-get params :arguments))))))

(defun dsh-session-preview ()
  "Show the readable message and the context the model will see for this buffer."
  (interactive)
  (let* ((prepared (dsh-session-prepare))
         (context (plist-get prepared :additionalContext)))
    (with-current-buffer (get-buffer-create "*dsh-session preview*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (plist-get (aref (plist-get prepared :content) 0) :text))
        (when context
          (insert "\n\n" (plist-get (aref (plist-get context :content) 0) :text))))
      (special-mode)
      (display-buffer (current-buffer)))))
