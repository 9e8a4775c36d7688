"""The sysbench scripts' summary tables (``qps.abs.*``, ``o.met.*``) read back into sysbench runs.

``parse`` reads the tables; ``suite`` describes them to the registry as a suite whose runs are sysbench's."""
