"""The Insert Benchmark: steps (l.i0, l.x, l.i1, l.i2, qr*, qp*) with their rates, SLA and per-second samples.

``parse`` reads its files; ``suite`` describes it to the registry."""
