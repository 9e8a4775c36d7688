-- Housekeeping commands run between the load and the tests:
--   analyze   refresh optimizer statistics (VACUUM ANALYZE on Postgres)
--   settings  print the server's configuration, one "name<TAB>value" line each

require("oltp_common")

function prepare_statements()
end

local function cmd_analyze()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   for t = 1, sysbench.opt.tables do
      local sql
      if drv:name() == "pgsql" then
         sql = "VACUUM ANALYZE sbtest" .. t
      else
         sql = "ANALYZE TABLE sbtest" .. t
      end
      print(sql)
      con:query(sql)
   end
   con:disconnect()
end

local function cmd_settings()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   local sql = "SHOW GLOBAL VARIABLES"
   if drv:name() == "pgsql" then
      sql = "SELECT name, setting FROM pg_settings ORDER BY name"
   end
   local rs = con:query(sql)
   for i = 1, rs.nrows do
      local row = rs:fetch_row()
      io.write(tostring(row[1]), "\t", tostring(row[2] or ""), "\n")
   end
   con:disconnect()
end

sysbench.cmdline.commands.analyze = {cmd_analyze}
sysbench.cmdline.commands.settings = {cmd_settings}
