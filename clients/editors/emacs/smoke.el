;;; smoke.el --- attach hrbench to Emacs with Eglot, score one output, stop  -*- lexical-binding: t -*-
;;
;; emacs --batch -l clients/editors/emacs/smoke.el
;; Eglot is built into Emacs 29 and later; on Emacs 28 install it (Debian: elpa-eglot).
;; $HRBENCH_LSP_CMD (a JSON array) chooses the server command, else `hrb serve --stdio'.
;; Prints the score as JSON, the server's version, the hash of a reference it stored, then
;; "stopped"; exits 0 when all of that worked. Eglot kills the server right after `exit' (the
;; server then ends with signal 9); what the server had stored is kept.
;;
;; A busy machine can take longer than Eglot's default 3 s to start Python: the script waits for
;; the connection (up to two minutes) instead of going on with no server, and every request
;; waits two minutes, not jsonrpc's 10 s.

(require 'eglot)
(require 'json)

(defconst hrbench-smoke-timeout 120
  "Seconds to wait for the server to start and for each reply.")

(let* ((eglot-sync-connect t)
       (eglot-connect-timeout hrbench-smoke-timeout)
       (dir (file-name-as-directory (make-temp-file "hrbench-eglot" t)))
       (env (getenv "HRBENCH_LSP_CMD"))
       (cmd (if env (json-parse-string env :array-type 'list) '("hrb" "serve" "--stdio")))
       (buf (find-file-noselect (expand-file-name "notes.txt" dir))))
  (unwind-protect
      (with-current-buffer buf
        (text-mode)
        ;; hrbench has no document features: any major mode will do; a transient project is
        ;; the folder itself (no version control needed).
        (let* ((server (eglot '(text-mode) (cons 'transient dir) 'eglot-lsp-server cmd "text"))
               (scored (jsonrpc-request server :score '(:output " paris " :label "Paris")
                                        :timeout hrbench-smoke-timeout))
               (status (jsonrpc-request server :status nil :timeout hrbench-smoke-timeout))
               (stored (jsonrpc-request
                        server :reference/put
                        '(:name "eglot-smoke" :reference (:items (:q1 "France") :labels (:q1 "Paris")))
                        :timeout hrbench-smoke-timeout)))
          (princ (format "%s\n" (json-encode scored)))
          (princ (format "version %s\n" (plist-get status :version)))
          (princ (format "reference %s\n" (plist-get stored :hash)))
          (eglot-shutdown server)
          (princ "stopped\n")))
    (kill-buffer buf)
    (delete-directory dir t)))
