"""NPU9xx: performance. Code that runs on the NPU as it is, slower than it could: host syncs in the training step,
blocking copies of pinned batches (informational: never rewritten, never a failed scan), and the run settings a
launch script the port edits gets (NPU902, the one rewrite). The expected effect of each, with its published
source, is package data (data/perf_figures.json), read by the reports' performance section."""
