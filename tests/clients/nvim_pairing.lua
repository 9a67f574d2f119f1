-- Headless Neovim: send a benchmark whose `items` is a Lua table (no key order) and print what came
-- back, for tests/clients/test_editors.py to check item by item. $HRBENCH_NVIM_LUA is the module's
-- folder, $HRBENCH_LSP_CMD the server command (a JSON array). Prints one JSON object on stdout.
package.path = vim.env.HRBENCH_NVIM_LUA .. "/?.lua;" .. package.path
local hrbench = require("hrbench")

local capitals = {
  France = "Paris", Peru = "Lima", Chad = "N'Djamena", Fiji = "Suva", Chile = "Santiago",
  Japan = "Tokyo", Kenya = "Nairobi", Nepal = "Kathmandu", Oman = "Muscat", Laos = "Vientiane",
  Mali = "Bamako", Cuba = "Havana",
}
local countries = { "France", "Peru", "Chad", "Fiji", "Chile", "Japan", "Kenya", "Nepal", "Oman", "Laos", "Mali", "Cuba" }

local records, items, labels, cluster, replies = {}, {}, {}, {}, {}
for n, country in ipairs(countries) do
  local id = "q" .. n
  local group = n <= 6 and "a" or "b"
  records[n] = { id = id, item = country, label = capitals[country], cluster = group }
  items[id] = country
  labels[id] = capitals[country]
  cluster[id] = group
  replies["Capital of " .. country .. "?"] = capitals[country]
end

local function spec(reference)
  return {
    arms = { { kind = "prompt", name = "ask", template = "Capital of {item}?" } },
    reference = reference,
    client = { kind = "mock", replies = replies, default = "I do not know" },
    runs = 1,
  }
end

local rows, out = {}, {}
local ok, err = pcall(function()
  local id = hrbench.start({
    cmd = vim.fn.json_decode(vim.env.HRBENCH_LSP_CMD),
    on_row = function(note) rows[#rows + 1] = note.row end,
  })
  if not id then error("could not start the server") end
  if not hrbench.wait_ready(id, 60000) then error("no reply to initialize") end
  -- the order a Lua table's keys reach the wire in
  out.wire_order = vim.fn.json_decode(vim.json.encode({ ids = vim.tbl_keys(items) })).ids
  -- keyed by id: every item is paired with its own label
  local result = hrbench.benchmark(id, spec({ items = items, labels = labels, cluster = cluster }), 120000)
  out.summary = result.summary
  out.rows = {}
  for _, row in ipairs(rows) do
    out.rows[#out.rows + 1] = { item = row.item, cluster = row.cluster, correct = row.correct, outcome = row.outcome }
  end
  out.items, out.labels = items, labels
  -- a list of labels beside the table of items: refused, not paired by position
  local refused, why = pcall(hrbench.benchmark, id, spec({ items = items, labels = vim.tbl_map(function(c)
    return capitals[c]
  end, countries) }), 120000)
  out.positional = { accepted = refused, error = tostring(why) }
  -- hrbench.reference(records) sends the keyed form: the same reference as the table above
  local by_hand = hrbench.request(id, "reference/put", { reference = { items = items, labels = labels, cluster = cluster } })
  local built = hrbench.request(id, "reference/put", { reference = hrbench.reference(records) })
  out.reference_hashes = { by_hand = by_hand.hash, from_records = built.hash }
  if not hrbench.stop(id, 15000) then error("the client did not stop") end
end)
if not ok then
  io.stderr:write("hrbench nvim pairing: " .. tostring(err) .. "\n")
  vim.cmd("cquit 1")
end
io.stdout:write(vim.json.encode(out) .. "\n")
vim.cmd("qall!")
