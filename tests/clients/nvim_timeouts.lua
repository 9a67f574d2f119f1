-- Headless Neovim: how long hrbench.lua waits for each method's reply, and what a request that
-- gets no reply in time raises. $HRBENCH_NVIM_LUA is the module's folder, $HRBENCH_LSP_CMD the
-- server command (a JSON array). Prints one JSON object on stdout.
package.path = vim.env.HRBENCH_NVIM_LUA .. "/?.lua;" .. package.path
local hrbench = require("hrbench")
local out = {}
local ok, err = pcall(function()
  local id = hrbench.start({ cmd = vim.json.decode(vim.env.HRBENCH_LSP_CMD) })
  if not hrbench.wait_ready(id, 60000) then error("the server did not answer initialize") end
  out.timeouts = hrbench.timeouts
  out.status = hrbench.request(id, "status")
  -- no time at all to answer: the error names the method, the limit and how to raise it
  local answered, why = pcall(hrbench.request, id, "report", { id = "nope" }, 0)
  out.no_time = { answered = answered, error = tostring(why) }
  if not hrbench.stop(id, 15000) then error("the client did not stop") end
end)
if not ok then
  io.stderr:write("hrbench nvim timeouts: " .. tostring(err) .. "\n")
  vim.cmd("cquit 1")
end
io.stdout:write(vim.json.encode(out) .. "\n")
vim.cmd("qall!")
