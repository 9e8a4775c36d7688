-- Point lookups by IN-list: points-covered-pk/si, points-notcovered-pk/si,
-- random-points (--points sets the list length) and hot-points (--hot).

require("bd_lib")

function prepare_statements()
   local key = bd_key_column()
   local columns = sysbench.opt.covered and key or "id, k, c, pad"
   bd_prepare("points", "SELECT " .. columns .. " FROM sbtest%u WHERE " .. key ..
                 " IN (" .. bd_placeholders(sysbench.opt.points) .. ")", bd_ints(sysbench.opt.points))
end

function event()
   local t = bd_table()
   bd_bind_keys(param[t].points, sysbench.opt.points, sysbench.opt.hot and bd_hot_key or bd_random_key)
   stmt[t].points:execute()
end
