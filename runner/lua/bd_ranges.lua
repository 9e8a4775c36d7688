-- Range reads of --range-size keys: range-covered-pk/si, range-notcovered-pk/si,
-- and read-only-count (--count).

require("bd_lib")

function prepare_statements()
   local key = bd_key_column()
   local columns
   if sysbench.opt.count then
      columns = "COUNT(*)"
   elseif sysbench.opt.covered then
      columns = key
   else
      columns = "id, k, c, pad"
   end
   bd_prepare("range", "SELECT " .. columns .. " FROM sbtest%u WHERE " .. key .. " BETWEEN ? AND ?", bd_ints(2))
end

function event()
   local t = bd_table()
   local first = bd_random_key()
   param[t].range[1]:set(first)
   param[t].range[2]:set(first + sysbench.opt.range_size - 1)
   stmt[t].range:execute()
end
