-- Full table scan: one event reads every row of one table and returns none.
-- benchdash turns the average latency into rows scanned per second using
-- --table-size, so an event must scan exactly one table.

require("bd_lib")

function prepare_statements()
   -- LENGTH(c) is never negative: the server must read every row to find that out.
   bd_prepare("scan", "SELECT id FROM sbtest%u WHERE LENGTH(c) < 0", {})
   next_table = sysbench.tid % sysbench.opt.tables
end

function event()
   -- Round-robin instead of random so every table is scanned equally often.
   next_table = next_table % sysbench.opt.tables + 1
   stmt[next_table].scan:execute()
end
