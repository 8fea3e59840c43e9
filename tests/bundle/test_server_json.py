# The MCP Registry entry tools/bundle.py writes beside the bundle: valid against the registry's
# published schema, naming the PyPI distribution (whose README carries the mcp-name: line the
# registry checks ownership by) and the bundle, by the bundle's own SHA-256.
import hashlib
import json
import os
import re

import jsonschema
import pytest

from tests.bundle.conftest import REPO

pytestmark = pytest.mark.xdist_group("bundle")   # beside test_bundle.py: one build
# https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json, the schema the
# registry published on 2025-12-11 (modelcontextprotocol/registry, generated from
# docs/reference/api/openapi.yaml), byte for byte: its SHA-256 is the one pinned by projects
# that validate against it.
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "server-2025-12-11.schema.json")
SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"


def schema():
    with open(SCHEMA, "rb") as f:
        data = f.read()
    assert hashlib.sha256(data).hexdigest() == SCHEMA_SHA256
    return json.loads(data)


def test_server_json_is_valid_against_the_registry_schema(built):
    bundle, entry, _unpacked = built
    with open(str(entry), encoding="utf-8") as f:
        server = json.load(f)
    published = schema()
    assert server["$schema"] == published["$id"]
    jsonschema.Draft7Validator(published, format_checker=jsonschema.FormatChecker()).validate(server)
    pypi, mcpb = server["packages"]
    assert pypi["registryType"] == "pypi" and pypi["identifier"] == "tinymcp-hw"
    assert mcpb["registryType"] == "mcpb" and mcpb["identifier"].endswith("/" + bundle.name)
    with open(str(bundle), "rb") as f:
        assert mcpb["fileSha256"] == hashlib.sha256(f.read()).hexdigest()
    assert pypi["version"] == mcpb["version"] == server["version"]


def test_the_schema_refuses_what_the_registry_refuses(built):
    _bundle, entry, _unpacked = built
    with open(str(entry), encoding="utf-8") as f:
        server = json.load(f)
    validator = jsonschema.Draft7Validator(schema())
    assert not validator.is_valid(dict(server, name="no-slash"))
    assert not validator.is_valid(dict(server, description="x" * 101))
    latest = dict(server["packages"][0], version="latest")
    assert not validator.is_valid(dict(server, packages=[latest]))


def test_the_readme_names_the_registry_entry_for_pypi(built):
    _bundle, entry, _unpacked = built
    with open(str(entry), encoding="utf-8") as f:
        name = json.load(f)["name"]
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert re.findall(r"mcp-name: (\S+)", readme) == [name]
