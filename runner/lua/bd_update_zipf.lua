-- update-zipf: non-index updates whose keys follow a Zipf-like law (--zipf-exp),
-- so a few rows take most writes.

require("bd_lib")

function prepare_statements()
   bd_prepare("update", "UPDATE sbtest%u SET c = ? WHERE id = ?", {"c", "int"})
end

function event()
   local t = bd_table()
   param[t].update[1]:set(get_c_value())
   param[t].update[2]:set(bd_zipf_key())
   stmt[t].update:execute()
end
