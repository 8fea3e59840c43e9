# Host programs (CPython only), installed as tinymcp.host: the bridge, deploy, benchmarks.
