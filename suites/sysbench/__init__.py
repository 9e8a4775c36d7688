"""sysbench as the field runs it: ``sb.o.<test>.range<R>.pk<P>.dop<N>`` outputs, ``sb.met``/``sb.r.qps`` summaries.

``parse`` reads its files; ``suite`` describes it to the registry."""
