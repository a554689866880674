;;; drive.el --- headless Emacs + eglot driver for tests/editors/test_emacs.py  -*- lexical-binding: t; -*-
;; Run as: emacs --batch -l drive.el   (not -Q: Debian's site-start puts elpa-eglot on the path)
;; Loads the shipped editors/emacs/fabric-lsp.el unchanged, opens $FABRIC_E2E_FILE, and plays a
;; user's session: M-x eglot, wait for the FAB001 flymake diagnostic, M-x eglot-code-actions
;; (quickfix) at it, save, wait for the diagnostic to go.  Observations go to the JSON file
;; $FABRIC_E2E_RESULT; Python does the asserts.
(require 'cl-lib)
(require 'json)
(require 'subr-x)

(defvar fe2e-result (list (cons 'emacs emacs-version) (cons 'steps nil)))
(defvar fe2e-timeout (/ (string-to-number (or (getenv "FABRIC_E2E_TIMEOUT_MS") "20000")) 1000.0))
(defvar fe2e-publishes nil "Raw publishDiagnostics params, newest first.")
(defvar fe2e-requests nil "Client->server request methods, newest first.")
(defvar fe2e-menu nil "Code actions offered to the user.")

(defun fe2e-put (key value) (push (cons key value) fe2e-result))
(defun fe2e-step (name) (setf (alist-get 'steps fe2e-result) (append (alist-get 'steps fe2e-result) (list name))))

(defun fe2e-write ()
  (let ((json-encoding-pretty-print nil)
        (coding-system-for-write 'utf-8))
    (fe2e-put 'publishes (vconcat (reverse fe2e-publishes)))
    (fe2e-put 'requests (vconcat (reverse fe2e-requests)))
    (fe2e-put 'menu (vconcat (reverse fe2e-menu)))
    (fe2e-put 'prompts (vconcat (reverse fe2e-prompts)))
    (fe2e-put 'steps (vconcat (alist-get 'steps fe2e-result)))
    (with-temp-file (getenv "FABRIC_E2E_RESULT")
      (insert (json-encode fe2e-result)))))

(defun fe2e-wait (what pred)
  (let ((deadline (+ (float-time) fe2e-timeout)))
    (while (not (funcall pred))
      (when (> (float-time) deadline)
        (error "Timed out after %ss waiting for %s" fe2e-timeout what))
      (accept-process-output nil 0.02))))

;; ---------------------------------------------------------------- the user's configuration
(when (getenv "FABRIC_E2E_EL") (load (getenv "FABRIC_E2E_EL") nil t))
(require 'eglot)
;; a documented snippet on top (e.g. the eglot-workspace-configuration example)
(when (getenv "FABRIC_E2E_EXTRA_EL") (load (getenv "FABRIC_E2E_EXTRA_EL") nil t))
(defvar fe2e-want-type (intern (concat "eglot-" (or (getenv "FABRIC_E2E_SEVERITY") "error"))))
;; C-u M-x eglot: eglot asks for the server command; the simulated user types it
(defvar fe2e-shell-prompts nil)
(defvar fe2e-cu-command (getenv "FABRIC_E2E_CU_COMMAND"))
(when fe2e-cu-command
  (advice-add 'read-shell-command :around
              (lambda (orig prompt &rest args)
                (if (string-match-p "program to execute" prompt)
                    (progn (push (list (cons 'prompt prompt) (cons 'initial (car args))) fe2e-shell-prompts)
                           fe2e-cu-command)
                  (apply orig prompt args)))))
(require 'flymake)
(fe2e-put 'eglot_library (locate-library "eglot"))
(fe2e-put 'python_entry (format "%S" (cl-find-if (lambda (e) (member "fabric-lsp" (ensure-list (cdr e))))
                                                   eglot-server-programs)))
(fe2e-put 'n_server_programs (length eglot-server-programs))
(fe2e-put 'n_python_entries (cl-count-if (lambda (e) (memq 'python-mode (ensure-list (car e))))
                                         eglot-server-programs))

;; ---------------------------------------------------------------- observation
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params)
              (when (eq method 'textDocument/publishDiagnostics)
                (push (list (cons 'uri (plist-get params :uri))
                            (cons 'diagnostics
                                  (vconcat (mapcar (lambda (d)
                                                     (let ((r (plist-get d :range)))
                                                       (list (cons 'code (plist-get d :code))
                                                             (cons 'severity (plist-get d :severity))
                                                             (cons 'source (plist-get d :source))
                                                             (cons 'start (list (cons 'line (plist-get (plist-get r :start) :line))
                                                                                (cons 'character (plist-get (plist-get r :start) :character))))
                                                             (cons 'end (list (cons 'line (plist-get (plist-get r :end) :line))
                                                                              (cons 'character (plist-get (plist-get r :end) :character))))
                                                             (cons 'relatedInformation
                                                                   (vconcat (mapcar (lambda (ri)
                                                                                      (let ((loc (plist-get ri :location)))
                                                                                        (list (cons 'location
                                                                                                    (list (cons 'uri (plist-get loc :uri))
                                                                                                          (cons 'range (list (cons 'start (list (cons 'line (plist-get (plist-get (plist-get loc :range) :start) :line))))))))
                                                                                              (cons 'message (plist-get ri :message)))))
                                                                                    (plist-get d :relatedInformation)))))))
                                                   (plist-get params :diagnostics)))))
                      fe2e-publishes))))
(advice-add 'jsonrpc-request :before
            (lambda (_conn method &rest _) (push (format "%s" method) fe2e-requests)))
(advice-add 'eglot--read-execute-code-action :before
            (lambda (actions &rest _)
              (dolist (a actions)
                (push (list (cons 'title (plist-get a :title))
                            (cons 'kind (plist-get a :kind))
                            (cons 'has_edit (if (plist-get a :edit) t :json-false))
                            (cons 'preferred (if (eq (plist-get a :isPreferred) t) t :json-false)))
                      fe2e-menu))))

;; More than one quickfix (the fix, "Disable FAB001 for this line"): eglot asks with
;; completing-read.  The simulated user presses RET, taking the default eglot offers (the
;; preferred action, else the first).
(defvar fe2e-prompts nil)
(advice-add 'completing-read :around
            (lambda (orig prompt collection &optional predicate require-match initial hist def &rest rest)
              (if (string-match-p "Pick an action" prompt)
                  (progn (push (list (cons 'prompt prompt) (cons 'default def)) fe2e-prompts)
                         (if (consp def) (car def) def))
                (apply orig prompt collection predicate require-match initial hist def rest))))

(defun fe2e-fab001 ()
  (cl-remove-if-not (lambda (d) (string-match-p "\\[FAB001\\]" (flymake-diagnostic-text d)))
                    (flymake-diagnostics)))

(defun fe2e-fab001-wanted ()
  (cl-remove-if-not (lambda (d) (eq (flymake-diagnostic-type d) fe2e-want-type)) (fe2e-fab001)))

(defun fe2e-publish-without-fab001-since (n)
  (cl-some (lambda (p) (not (cl-some (lambda (d) (equal (alist-get 'code d) "FAB001"))
                                     (alist-get 'diagnostics p))))
           (butlast fe2e-publishes n)))

;; ---------------------------------------------------------------- the session
(defun fe2e-session ()
  (find-file (getenv "FABRIC_E2E_FILE"))
  (fe2e-put 'major_mode (symbol-name major-mode))
  (fe2e-step "opened")

  (if fe2e-cu-command
      (let ((current-prefix-arg '(4))) (call-interactively #'eglot))   ; C-u M-x eglot
    (call-interactively #'eglot))    ; M-x eglot: picks the server from eglot-server-programs
  (fe2e-put 'shell_prompts (vconcat fe2e-shell-prompts))
  (fe2e-wait "eglot to manage the buffer" (lambda () (bound-and-true-p eglot--managed-mode)))
  (let ((server (eglot-current-server)))
    (fe2e-put 'server_command (vconcat (process-command (jsonrpc--process server))))
    (fe2e-put 'server_name (plist-get (eglot--server-info server) :name)))
  (fe2e-step "attached")

  (flymake-start)
  (fe2e-wait (format "FAB001 (%s)" fe2e-want-type)
             (lambda () (flymake-start) (accept-process-output nil 0.05) (fe2e-fab001-wanted)))
  (let* ((d (car (fe2e-fab001-wanted)))
         (beg (flymake-diagnostic-beg d))
         (end (flymake-diagnostic-end d)))
    (goto-char beg)
    (fe2e-put 'diagnostic
              (list (cons 'line (1- (line-number-at-pos beg)))
                    (cons 'col (current-column))   ; characters
                    (cons 'end_line (1- (line-number-at-pos end)))
                    (cons 'end_col (save-excursion (goto-char end) (current-column)))
                    (cons 'type (symbol-name (flymake-diagnostic-type d)))
                    (cons 'text (flymake-diagnostic-text d))
                    (cons 'line_text (buffer-substring-no-properties (line-beginning-position) (line-end-position)))
                    (cons 'expected_col (save-excursion
                                          (beginning-of-line)
                                          (if (search-forward "fabric.setup_optimizers" (line-end-position) t)
                                              (- (current-column) (length "fabric.setup_optimizers"))
                                            -1)))))
    (fe2e-step "diagnosed")

    ;; The user, point on the squiggle: M-x eglot-code-actions with the quickfix kind.  With
    ;; one action of that kind eglot applies it without a menu.
    (let ((tick (buffer-modified-tick))
          (n (length fe2e-publishes)))
      ;; a keyboard user (not a mouse click): eglot then uses completing-read, not a popup menu
      (let ((last-nonmenu-event ?\r))
        (eglot-code-actions (point) nil "quickfix" t))
      (fe2e-wait "the quick fix to edit the buffer" (lambda () (/= tick (buffer-modified-tick))))
      (fe2e-step "edited")
      (save-buffer)
      (fe2e-step "written")
      (fe2e-wait "a fresh publishDiagnostics without FAB001"
                 (lambda () (fe2e-publish-without-fab001-since n)))
      (fe2e-wait "FAB001 to leave flymake"
                 (lambda () (flymake-start) (accept-process-output nil 0.05) (null (fe2e-fab001))))
      (fe2e-put 'buffer_after (buffer-substring-no-properties (point-min) (point-max)))
      (fe2e-put 'modified_after (if (buffer-modified-p) t :json-false))
      (fe2e-step "clean"))))

;; ---------------------------------------------------------------- FAB010 (batch-job script)
;; FABRIC_E2E_SCENARIO=fab010: $FABRIC_E2E_FILE (train.py) is launched by $FABRIC_E2E_SCRIPT (a
;; SLURM script).  M-x eglot in train.py, wait for FAB010 there; then open the script (sh-mode
;; through its #!/bin/bash line), M-x eglot there too (fabric-lsp only with the opt-in sh-mode
;; entry of fabric-lsp.el), wait for FAB010 on its line.
(defun fe2e-with-code (code)
  (cl-remove-if-not (lambda (d) (string-match-p (regexp-quote (format "[%s]" code)) (flymake-diagnostic-text d)))
                    (flymake-diagnostics)))

(defun fe2e-diag-record (d)
  (let ((beg (flymake-diagnostic-beg d))
        (end (flymake-diagnostic-end d)))
    (save-excursion
      (goto-char beg)
      (list (cons 'line (1- (line-number-at-pos beg)))
            (cons 'col (current-column))   ; characters
            (cons 'end_line (1- (line-number-at-pos end)))
            (cons 'end_col (save-excursion (goto-char end) (current-column)))
            (cons 'type (symbol-name (flymake-diagnostic-type d)))
            (cons 'text (flymake-diagnostic-text d))
            (cons 'line_text (buffer-substring-no-properties (line-beginning-position) (line-end-position)))))))

(defun fe2e-eglot-here (prefix)
  "M-x eglot in the current buffer; wait until it manages it; record the server under PREFIX."
  (call-interactively #'eglot)
  (fe2e-wait "eglot to manage the buffer" (lambda () (bound-and-true-p eglot--managed-mode)))
  (let ((server (eglot-current-server)))
    (fe2e-put (intern (concat prefix "server_command")) (vconcat (process-command (jsonrpc--process server))))
    (fe2e-put (intern (concat prefix "server_name")) (plist-get (eglot--server-info server) :name))))

(defun fe2e-wait-code (code)
  (flymake-start)
  (fe2e-wait (format "%s in %s" code (buffer-name))
             (lambda () (flymake-start) (accept-process-output nil 0.05) (fe2e-with-code code)))
  (vconcat (mapcar #'fe2e-diag-record (fe2e-with-code code))))

(defun fe2e-session-fab010 ()
  (find-file (getenv "FABRIC_E2E_FILE"))
  (fe2e-put 'major_mode (symbol-name major-mode))
  (fe2e-step "opened")
  (fe2e-eglot-here "")
  (fe2e-step "attached")
  (fe2e-put 'python_diagnostics (fe2e-wait-code "FAB010"))
  (fe2e-step "python diagnosed")

  (find-file (getenv "FABRIC_E2E_SCRIPT"))
  (fe2e-put 'script_major_mode (symbol-name major-mode))
  (fe2e-step "script opened")
  (fe2e-eglot-here "script_")
  (fe2e-step "script attached")
  (fe2e-put 'script_diagnostics (fe2e-wait-code "FAB010"))
  (fe2e-step "script diagnosed"))

(when (equal (getenv "FABRIC_E2E_SCENARIO") "fab010")
  (fset 'fe2e-session #'fe2e-session-fab010))

(let ((ok nil))
  (condition-case err
      (progn (fe2e-session) (setq ok t))
    (error (fe2e-put 'error (error-message-string err))))
  (fe2e-put 'ok (if ok t :json-false))
  (ignore-errors
    (let ((events (cl-find-if (lambda (b) (string-match-p "^\\*EGLOT.*events\\*$" (buffer-name b)))
                              (buffer-list))))
      (when events
        (with-current-buffer events
          (fe2e-put 'events_tail (buffer-substring-no-properties (max (point-min) (- (point-max) 6000))
                                                                 (point-max)))))))
  (fe2e-write)
  (ignore-errors (let ((s (eglot-current-server))) (when s (eglot-shutdown s))))
  (kill-emacs (if ok 0 1)))
