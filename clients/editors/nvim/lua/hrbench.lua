-- hrbench for Neovim (0.7+): attach the hrbench daemon as an LSP client and call its methods.
--
--   local hrbench = require("hrbench")
--   local id = hrbench.start()                     -- spawns `hrb serve --stdio`
--   hrbench.wait_ready(id)
--   print(vim.inspect(hrbench.score(id, "  paris ", "Paris")))   -- { correct = true, ... }
--   hrbench.stop(id)                               -- LSP shutdown + exit; the server exits 0
--
-- Or `require("hrbench").setup()` for the commands :HrbenchScore LABEL OUTPUT..., :HrbenchStatus
-- and :HrbenchStop. Rows of a benchmark arrive in `hrbench/rows` notifications, a batch each;
-- opts.on_row is called once per row with { request_id, benchmark, row }.
--
-- A reference keys its labels (and a per-item cluster or split) by item id, as `items` is:
--   reference = { items = { q1 = "France", q2 = "Peru" }, labels = { q1 = "Paris", q2 = "Lima" } }
-- A Lua table keeps no key order, so `labels = { "Paris", "Lima" }` beside a table of items could
-- not be paired by position: the daemon refuses it, showing the keyed form. hrbench.reference()
-- builds the keyed form from a list of records { id, item, label, cluster, split }, which keeps
-- its order.
local M = {}

local function client(id)
  local c = vim.lsp.get_client_by_id(id)
  if c == nil then
    error("hrbench: no LSP client " .. tostring(id))
  end
  return c
end

--- Start the server; returns the LSP client id.
--- opts.cmd: the command (default { "hrb", "serve", "--stdio" });
--- opts.on_row: called with { request_id, benchmark, row } for each row of an `hrbench/rows` batch;
--- opts.on_progress: called with each progress notification's params;
--- opts.on_exit: called with (code, signal) when the server process ends.
function M.start(opts)
  opts = opts or {}
  return vim.lsp.start_client({
    name = "hrbench",
    cmd = opts.cmd or { "hrb", "serve", "--stdio" },
    root_dir = opts.root_dir or vim.loop.cwd(),
    handlers = {
      ["hrbench/rows"] = function(_, params)
        if opts.on_row then
          for _, row in ipairs(params.rows) do
            opts.on_row({ request_id = params.request_id, benchmark = params.benchmark, row = row })
          end
        end
      end,
      ["hrbench/progress"] = function(_, params)
        if opts.on_progress then opts.on_progress(params) end
      end,
    },
    on_exit = opts.on_exit,
  })
end

--- Wait until the server has answered `initialize`; false on timeout.
function M.wait_ready(id, timeout_ms)
  return vim.wait(timeout_ms or 10000, function()
    local c = vim.lsp.get_client_by_id(id)
    return c ~= nil and c.initialized == true
  end, 10)
end

--- How long a request waits for its reply, in milliseconds, by method (`default` for the rest).
--- A first `report` on a busy daemon computes its intervals and can take longer than a score;
--- a benchmark or an evaluation runs until it ends. Change them here or per call (timeout_ms).
M.timeouts = { default = 120000, score = 30000, status = 30000, benchmark = 3600000, evaluate = 3600000 }

--- Call any hrbench method and wait for its result (raises the server's error message).
--- timeout_ms: how long to wait (default M.timeouts[method], else M.timeouts.default).
function M.request(id, method, params, timeout_ms)
  timeout_ms = timeout_ms or M.timeouts[method] or M.timeouts.default
  local res, why = client(id).request_sync(method, params or vim.empty_dict(), timeout_ms)
  if res == nil then
    error("hrbench: " .. method .. " got no reply within " .. timeout_ms .. " ms (" .. tostring(why)
      .. "; raise require('hrbench').timeouts." .. method .. " or pass timeout_ms)")
  end
  if res.err then
    error("hrbench: " .. method .. ": " .. tostring(res.err.message or vim.inspect(res.err)))
  end
  return res.result
end

--- Score one output against a label; returns { correct, outcome, failure_kind, scorer }.
function M.score(id, output, label, scorer)
  return M.request(id, "score", { output = output, label = label, scorer = scorer or "exact" })
end

--- A reference spec keyed by item id, from a list of records { id =, item =, label =, cluster =,
--- split = } (a record without `id` gets its position; a record without `label` has no label).
--- Raises on a record without `item` and on two records with one id.
function M.reference(records)
  local ref = { items = {}, labels = {}, cluster = {}, split = {} }
  local has = { labels = false, cluster = false, split = false }
  for n, r in ipairs(records) do
    local id = tostring(r.id ~= nil and r.id or n)
    if r.item == nil then error("hrbench.reference: record " .. n .. " (id " .. id .. ") has no item") end
    if ref.items[id] ~= nil then error("hrbench.reference: records with the same id " .. id) end
    ref.items[id] = r.item
    for field, value in pairs({ labels = r.label, cluster = r.cluster, split = r.split }) do
      ref[field][id] = value
      has[field] = true
    end
  end
  if next(ref.items) == nil then error("hrbench.reference: no records") end
  for field, used in pairs(has) do
    if not used then ref[field] = nil end -- an empty table would be sent as a list, []
  end
  return ref
end

--- Run a benchmark spec (a table, as `hrb bench` reads from TOML); rows go to opts.on_row.
--- Its reference keys labels, cluster and split by item id (see M.reference).
function M.benchmark(id, spec, timeout_ms)
  return M.request(id, "benchmark", spec, timeout_ms)
end

--- LSP shutdown then exit; waits until the client is stopped (false on timeout).
function M.stop(id, timeout_ms)
  local c = client(id)
  c.stop()
  return vim.wait(timeout_ms or 10000, function() return c.is_stopped() end, 10)
end

--- Commands: :HrbenchScore LABEL OUTPUT..., :HrbenchStatus, :HrbenchStop.
function M.setup(opts)
  local id
  local function ensure()
    if id == nil or vim.lsp.get_client_by_id(id) == nil then
      id = M.start(opts)
      M.wait_ready(id)
    end
    return id
  end
  vim.api.nvim_create_user_command("HrbenchScore", function(cmd)
    local label, output = cmd.fargs[1], table.concat(vim.list_slice(cmd.fargs, 2), " ")
    print(vim.fn.json_encode(M.score(ensure(), output, label)))
  end, { nargs = "+", desc = "hrbench: score OUTPUT against LABEL" })
  vim.api.nvim_create_user_command("HrbenchStatus", function()
    print(vim.fn.json_encode(M.request(ensure(), "status")))
  end, { desc = "hrbench: the server's status" })
  vim.api.nvim_create_user_command("HrbenchStop", function()
    if id ~= nil then M.stop(id) end
    id = nil
  end, { desc = "hrbench: stop the server" })
end

return M
