-- update-one: every event updates the same row, so writers queue on one row lock.

require("bd_lib")

function prepare_statements()
   bd_prepare("update", "UPDATE sbtest%u SET k = k + 1 WHERE id = ?", bd_ints(1))
end

function event()
   local t = bd_table()
   param[t].update[1]:set(1)
   stmt[t].update:execute()
end
