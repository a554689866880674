;;; fabric-lsp.el --- Use fabric-lsp with Eglot  -*- lexical-binding: t; -*-

;; Works with Emacs 28 + eglot 1.9 (Debian: emacs-nox elpa-eglot) and with the eglot built
;; into Emacs 29+.  Load it from your init file:
;;
;;   (load "/path/to/fabric-lsp/editors/emacs/fabric-lsp.el")
;;   (add-hook 'python-mode-hook #'eglot-ensure)   ; optional: start it automatically
;;
;; Eglot runs ONE language server per buffer: the first entry of `eglot-server-programs'
;; matching the major mode.  Loading this file puts fabric-lsp first for Python buffers, so
;; there it replaces pylsp/pyright/jedi-language-server *in Eglot*.  Nothing is deleted:
;; the other entries stay in the list, and
;;   (setq eglot-server-programs (assoc-delete-all '(python-mode python-ts-mode)
;;                                                 eglot-server-programs))
;; brings them back.  To keep another Python server by default, don't load this file:
;; in a Python buffer, `C-u M-x eglot', replace the suggested command with fabric-lsp, RET.
;;
;; Batch-job scripts (SLURM `*.sbatch'/`*.slurm', `*.sh' with torchrun): fabric-lsp reports FAB010
;; on their lines too.  Eglot would then replace bash-language-server in shell buffers, so this
;; is opt-in:
;;   (with-eval-after-load 'eglot
;;     (add-to-list 'eglot-server-programs `((sh-mode bash-ts-mode) . ,fabric-lsp-command)))
;;   (add-to-list 'auto-mode-alist '("\\.\\(sbatch\\|slurm\\)\\'" . sh-mode)) ; scripts without #!
;; (Python buffers get the same finding at `Fabric(devices=...)' either way.)

;;; Code:

(defvar fabric-lsp-command '("fabric-lsp")
  "Command that starts fabric-lsp speaking LSP on stdio.")

;; `with-eval-after-load', not a bare `add-to-list': eglot defines `eglot-server-programs'
;; with `defvar', so adding to it before eglot is loaded would create the variable holding
;; only this entry, and every other language's default server would be lost.
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               `((python-mode python-ts-mode) . ,fabric-lsp-command)))

(provide 'fabric-lsp)
;;; fabric-lsp.el ends here
