"""The open result format: documents from any harness, and sysbench's own report-hook outputs, as runs."""
