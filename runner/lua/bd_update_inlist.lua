-- update-inlist: one UPDATE of --points random rows found by primary key.

require("bd_lib")

function prepare_statements()
   bd_prepare("update", "UPDATE sbtest%u SET k = k + 1 WHERE id IN (" ..
                 bd_placeholders(sysbench.opt.points) .. ")", bd_ints(sysbench.opt.points))
end

function event()
   local t = bd_table()
   bd_bind_keys(param[t].update, sysbench.opt.points, bd_random_key)
   stmt[t].update:execute()
end
