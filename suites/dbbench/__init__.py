"""RocksDB's db_bench as the field's benchmark scripts drive it: per-test outputs and their summary tables.

``parse`` reads its files; ``suite`` describes it to the registry."""
