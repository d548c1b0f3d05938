;;; emacs-common.el --- shared parts of the headless Emacs drivers  -*- lexical-binding: t -*-
;; The report ($DSH_RESULT_FILE), polling to a deadline, and a completion UI stand-in that plays
;; the part of Corfu/Company: it is called by `completion-at-point' through
;; `completion-in-region-function', lists the candidates the way those UIs do (the completion
;; styles, then the table's own display-sort-function), inserts the first, and calls the table's
;; :exit-function, which is where eglot and lsp-mode apply the item's textEdit.
(require 'json)
(require 'cl-lib)
(require 'seq)

(defvar dsh-test-result (list :steps nil) "The report, a plist written as JSON at the end.")

(defun dsh-test-put (key value) (setq dsh-test-result (plist-put dsh-test-result key value)))
(defun dsh-test-step (name)
  (dsh-test-put :steps (vconcat (plist-get dsh-test-result :steps) (list name))))

(defun dsh-test-finish (ok)
  "Write the report and leave Emacs with status 0 when OK, else 1."
  (dsh-test-put :ok (if ok t :json-false))
  (with-temp-file (getenv "DSH_RESULT_FILE")
    (setq buffer-file-coding-system 'utf-8-unix)
    (insert (json-encode dsh-test-result)))
  (kill-emacs (if ok 0 1)))

(defun dsh-test-wait (what predicate &optional seconds)
  "Process events until PREDICATE returns non-nil; signal an error naming WHAT after SECONDS."
  (let ((deadline (+ (float-time) (or seconds 20))))
    (while (not (funcall predicate))
      (when (> (float-time) deadline) (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun dsh-test-wait-indexed (list-candidates)
  "Wait until LIST-CANDIDATES (a function that runs dshSession.candidates through the client)
returns every session of the test store: the server indexes the store in the background."
  (let ((expected (string-to-number (getenv "DSH_EXPECTED_CANDIDATES"))))
    (dsh-test-wait (format "the server to list %d sessions" expected)
                   (lambda ()
                     (let ((candidates (funcall list-candidates)))
                       (dsh-test-put :candidates candidates)
                       (or (>= (length candidates) expected) (progn (sleep-for 0.1) nil)))))
    (dsh-test-step "indexed")))

(defun dsh-test-type (text)
  "Type TEXT at point as self-inserted keys, so change hooks fire as when a user types."
  (dolist (char (string-to-list text))
    (let ((last-command-event char)) (self-insert-command 1))))

(defun dsh-test-pick-first (start end collection predicate)
  "Completion UI stand-in: record the offered candidates, accept the first one."
  (let* ((input (buffer-substring-no-properties start end))
         (metadata (completion-metadata input collection predicate))
         (all (completion-all-completions input collection predicate (- (point) start) metadata))
         (last-pair (last all))
         (sort (completion-metadata-get metadata 'display-sort-function))
         (exit (plist-get completion-extra-properties :exit-function)))
    (when (consp last-pair) (setcdr last-pair nil)) ; drop the base-size terminator
    (setq all (if sort (funcall sort all) all))
    (dsh-test-put :menu (vconcat (mapcar (lambda (c) (list :label (substring-no-properties c))) all)))
    (unless all (error "No completion candidates at %S" input))
    (delete-region start end)
    (goto-char start)
    (insert (car all))
    (when exit (funcall exit (car all) 'finished))
    t))

(defun dsh-test-complete-first ()
  "Run the real `completion-at-point' with the stand-in UI; record the line after accepting."
  (let ((completion-in-region-function #'dsh-test-pick-first))
    (unless (completion-at-point) (error "completion-at-point found nothing")))
  (dsh-test-put :lineAfterAccept (buffer-substring-no-properties (line-beginning-position) (line-end-position))))

(defun dsh-test-server-stderr ()
  "The text of the buffers where eglot and lsp-mode keep a server's stderr."
  (mapconcat (lambda (buffer) (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))
             (seq-filter (lambda (b) (string-match-p "stderr" (buffer-name b))) (buffer-list))
             "\n"))

(defmacro dsh-test-run (&rest body)
  "Run BODY; on any error, record it (and the server's stderr) and exit non-zero."
  `(condition-case err
       (progn ,@body (dsh-test-finish t))
     (error (dsh-test-put :error (error-message-string err))
            (dsh-test-put :serverStderr (dsh-test-server-stderr))
            (dsh-test-finish nil))))

(provide 'emacs-common)
