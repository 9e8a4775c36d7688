-- Shared by benchdash's microbenchmark scripts: options and helpers on top of
-- sysbench's bundled oltp_common (tables sbtest1..N, columns id, k, c, pad,
-- primary key on id and secondary index k_N on k, as `oltp_common prepare`
-- creates them). Statements run in autocommit, like the classic scripts run
-- their read tests with --skip-trx: one event is one statement.

require("oltp_common")

local options = sysbench.cmdline.options
options.points = {"Keys in each IN-list (point tests, update-inlist)", 10}
options.on_key = {"Key a point or range test searches: pk (id) or si (the secondary index on k)", "pk"}
options.covered = {"Select only the searched key, so the index alone answers the query", true}
options.hot = {"Draw the IN-list keys from a small set of rows that stays cached", false}
options.count = {"Range test: return COUNT(*) instead of the rows", false}
options.zipf_exp = {"Exponent of the Zipf-like key distribution (update-zipf)", 0.8}

function bd_key_column()
   if sysbench.opt.on_key == "pk" then
      return "id"
   elseif sysbench.opt.on_key == "si" then
      return "k"
   end
   error("--on-key must be pk or si, not " .. tostring(sysbench.opt.on_key))
end

-- A random table per event, as oltp_common does, so every table is read.
function bd_table()
   return sysbench.rand.uniform(1, sysbench.opt.tables)
end

function bd_random_key()
   return sysbench.rand.default(1, sysbench.opt.table_size)
end

-- Keys from a continuous power law on [1, table_size]: key 1 is the hottest.
-- Inverse-CDF sampling needs no table, so it works at any table size; sysbench
-- 1.0 has no zipfian --rand-type, which is why this lives here.
function bd_zipf_key()
   local n = sysbench.opt.table_size
   local s = sysbench.opt.zipf_exp
   local u = sysbench.rand.uniform_double()
   local key
   if math.abs(s - 1) < 1e-9 then
      key = math.floor((n + 1) ^ u)
   else
      local a = 1 - s
      key = math.floor((1 + u * ((n + 1) ^ a - 1)) ^ (1 / a))
   end
   return math.max(1, math.min(n, key))
end

-- Prepare `sql` (a format string taking the table number) for every table, as
-- stmt[t][name] with one bound parameter per entry of `kinds` ("int" or "c",
-- the CHAR(120) column) in param[t][name].
function bd_prepare(name, sql, kinds)
   for t = 1, sysbench.opt.tables do
      stmt[t][name] = con:prepare(string.format(sql, t))
      param[t][name] = {}
      for p, kind in ipairs(kinds) do
         if kind == "c" then
            param[t][name][p] = stmt[t][name]:bind_create(sysbench.sql.type.CHAR, 120)
         else
            param[t][name][p] = stmt[t][name]:bind_create(sysbench.sql.type.INT)
         end
      end
      if #kinds > 0 then
         stmt[t][name]:bind_param(unpack(param[t][name]))
      end
   end
end

function bd_ints(n)
   local kinds = {}
   for i = 1, n do
      kinds[i] = "int"
   end
   return kinds
end

function bd_placeholders(n)
   local marks = {}
   for i = 1, n do
      marks[i] = "?"
   end
   return table.concat(marks, ", ")
end

-- Bind `n` distinct-enough keys, sorted so concurrent writers lock rows in the
-- same order and do not deadlock each other.
function bd_bind_keys(params, n, next_key)
   local keys = {}
   for i = 1, n do
      keys[i] = next_key()
   end
   table.sort(keys)
   for i = 1, n do
      params[i]:set(keys[i])
   end
end

function bd_hot_key()
   -- 1% of the table, never fewer rows than one IN-list: small enough to stay cached.
   local limit = math.max(sysbench.opt.points, math.floor(sysbench.opt.table_size / 100))
   return sysbench.rand.uniform(1, math.min(limit, sysbench.opt.table_size))
end
