-- Headless check: attach Neovim to hrbench over stdio, score one output, stop cleanly.
-- Run by smoke.sh; the server command is $HRBENCH_LSP_CMD (a JSON array) or `hrb serve --stdio`.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
package.path = here .. "/lua/?.lua;" .. package.path
local hrbench = require("hrbench")

local cmd = { "hrb", "serve", "--stdio" }
if vim.env.HRBENCH_LSP_CMD and vim.env.HRBENCH_LSP_CMD ~= "" then
  cmd = vim.fn.json_decode(vim.env.HRBENCH_LSP_CMD)
end

local exit_code
local ok, err = pcall(function()
  local id = hrbench.start({ cmd = cmd, on_exit = function(code) exit_code = code end })
  if not id then error("could not start " .. table.concat(cmd, " ")) end
  if not hrbench.wait_ready(id, 60000) then error("no reply to initialize") end
  local scored = hrbench.score(id, "  paris ", "Paris")
  if scored.correct ~= true then error("unexpected score " .. vim.inspect(scored)) end
  io.stdout:write(vim.fn.json_encode(scored) .. "\n")
  if not hrbench.stop(id, 15000) then error("the client did not stop") end
  if not vim.wait(15000, function() return exit_code ~= nil end, 10) then
    error("the server did not exit")
  end
  if exit_code ~= 0 then error("the server exited with " .. tostring(exit_code)) end
  io.stdout:write("stopped cleanly (exit code 0)\n")
end)
if not ok then
  io.stderr:write("hrbench nvim smoke: " .. tostring(err) .. "\n")
  vim.cmd("cquit 1")
end
vim.cmd("qall!")
