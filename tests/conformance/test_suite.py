# The official MCP conformance suite (npm @modelcontextprotocol/conformance 0.1.16, every server
# scenario) against `tinymcp-bridge --sim conformance --http`: no scenario may fail.
import glob
import json
import os
import subprocess

from tests.bridge.conftest import clean_env
from tests.conformance.conftest import suite_command

# The suite's server scenarios at 0.1.16 (`conformance list`): each must run and pass.
SCENARIOS = {
    "server-initialize", "logging-set-level", "ping", "completion-complete", "tools-list",
    "tools-call-simple-text", "tools-call-image", "tools-call-audio",
    "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-with-logging",
    "tools-call-error", "tools-call-with-progress", "tools-call-sampling",
    "tools-call-elicitation", "json-schema-2020-12", "elicitation-sep1034-defaults",
    "server-sse-polling", "server-sse-multiple-streams", "elicitation-sep1330-enums",
    "resources-list", "resources-read-text", "resources-read-binary", "resources-templates-read",
    "resources-subscribe", "resources-unsubscribe", "prompts-list", "prompts-get-simple",
    "prompts-get-with-args", "prompts-get-embedded-resource", "prompts-get-with-image",
    "dns-rebinding-protection",
}


def run_suite(url, out_dir):
    argv, path = suite_command()
    done = subprocess.run(argv + ["server", "--url", url, "--suite", "all", "-o", out_dir],
                          cwd=out_dir, env=clean_env(PATH=path), capture_output=True, timeout=240)
    return done


def results(out_dir):
    # -> {scenario: [checks]} from the suite's checks.json files (server-<scenario>-<time>/).
    found = {}
    for path in glob.glob(os.path.join(out_dir, "server-*", "checks.json")):
        name = os.path.basename(os.path.dirname(path))[len("server-"):].rsplit("-", 6)[0]
        with open(path) as f:
            found[name] = json.load(f)
    return found


def table(found):
    lines = []
    for name in sorted(found):
        counts = {}
        for check in found[name]:
            counts[check["status"]] = counts.get(check["status"], 0) + 1
        lines.append("%-32s %s" % (name, ", ".join("%s=%d" % kv for kv in sorted(counts.items()))))
    return "\n".join(lines)


def test_every_server_scenario_passes_through_the_bridge(http_bridge, tmp_path):
    url, bridge = http_bridge(board="conformance")
    done = run_suite(url, str(tmp_path))
    found = results(str(tmp_path))
    report = table(found)
    print(report)
    failures = ["%s: %s: %s" % (name, c["id"], c.get("errorMessage"))
                for name, checks in sorted(found.items()) for c in checks
                if c["status"] == "FAILURE"]
    assert not failures, "\n".join(failures) + "\n\n" + report
    # The SHOULDs too (SSE priming event and retry field): none is left as a warning.
    warnings = [(name, c["id"]) for name, checks in found.items() for c in checks
                if c["status"] == "WARNING"]
    assert not warnings, "%r\n\n%s" % (warnings, report)
    assert set(found) == SCENARIOS, (sorted(set(found) ^ SCENARIOS), done.stdout[-3000:])
    assert done.returncode == 0, done.stdout.decode()[-3000:] + done.stderr.decode()[-3000:]
    assert b"0 failed" in done.stdout.splitlines()[-1], done.stdout[-500:]
    assert "Traceback" not in bridge.stderr(), bridge.stderr()[-3000:]
