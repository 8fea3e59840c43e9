# Host programs (CPython only): the bridge, deploy and firmware. Never deployed to a board and
# never imported by device code; developer scripts (benchmarks, generators) live in tools/.
