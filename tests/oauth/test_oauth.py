# The bridge as an OAuth 2.1 resource server (--oauth-issuer), as the MCP authorization
# specification has it: a spec-following client discovers the issuer from a 401, the official
# SDK client completes a session through the authorization code flow against a real
# authorization server (oidc-provider), scopes split reading from acting, and every token that
# should not hold is refused.
import asyncio
import base64
import hashlib
import hmac
import json
import re
import time

import httpx2 as httpx
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from tests.bridge.test_http import INIT, post
from tests.bridge_modern.http_tasks import polled, refused_to, start_sample, task_post
from tests.oauth.conftest import ScriptedLogin
from tests.windows_shim import as_on_windows  # noqa: F401
from tests.windows_shim import windows_paths_run_by


# Under the Windows shim (tests/windows_shim), the two named below start the bridge as a resource
# server and take a client from its 401 to a session through the code flow; the other tests differ
# in which token is presented, checked in OS-independent code. Tests marked @windows_covered run
# once, as on POSIX: under the shim they would take no path the tests named below do not.
windows_covered = windows_paths_run_by(
    "test_a_401_leads_a_client_to_the_metadata_and_the_metadata_to_the_issuer",
    "test_the_sdk_client_completes_a_session_through_the_code_flow_and_steps_up_to_act")


def challenge(response):
    # WWW-Authenticate's parameters -> dict.
    value = response.headers["www-authenticate"]
    assert value.startswith("Bearer "), value
    return dict(re.findall(r'(\w+)="([^"]*)"', value))


class Memory:
    # The SDK's TokenStorage, in memory.
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


def test_a_401_leads_a_client_to_the_metadata_and_the_metadata_to_the_issuer(provider,
                                                                              oauth_bridge):
    url, bridge = oauth_bridge(provider.issuer)
    refused = post(url, INIT)
    assert refused.status_code == 401
    said = challenge(refused)
    base = url.rsplit("/", 1)[0]
    assert said["resource_metadata"] == base + "/.well-known/oauth-protected-resource/mcp"
    assert said["scope"] == "tinymcp.read"
    for where in (said["resource_metadata"], base + "/.well-known/oauth-protected-resource"):
        metadata = httpx.get(where, timeout=20)
        assert metadata.status_code == 200, where
        found = metadata.json()
        assert found["resource"] == url
        assert found["authorization_servers"] == [provider.issuer]
        assert found["scopes_supported"] == ["tinymcp.read", "tinymcp.act"]
        assert found["bearer_methods_supported"] == ["header"]
        assert "access-control-allow-origin" not in metadata.headers   # still no CORS
    issuer = httpx.get(found["authorization_servers"][0]
                       + "/.well-known/oauth-authorization-server", timeout=20).json()
    assert issuer["issuer"] == provider.issuer and "S256" in issuer["code_challenge_methods_supported"]
    bad = post(url, INIT, authorization="Bearer not-a-jwt")
    assert bad.status_code == 401 and challenge(bad)["error"] == "invalid_token"


def test_the_sdk_client_completes_a_session_through_the_code_flow_and_steps_up_to_act(
        provider, oauth_bridge):
    url, bridge = oauth_bridge(provider.issuer, "--log-level", "debug")
    login = ScriptedLogin()
    storage = Memory()
    auth = OAuthClientProvider(
        server_url=url, storage=storage, redirect_handler=login.redirect,
        callback_handler=login.callback,
        client_metadata=OAuthClientMetadata(client_name="pytest", redirect_uris=[
            login.redirect_uri], grant_types=["authorization_code", "refresh_token"]))

    async def main():
        async with httpx.AsyncClient(auth=auth, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http),
                              mode="legacy") as client:
                # The 401's scope first: reading only (and a refresh token, offline_access).
                assert [set(asked.split()) - {"offline_access"} for asked in login.asked] \
                    == [{"tinymcp.read"}]
                names = [tool.name for tool in (await client.list_tools()).tools]
                assert "read_temperature" in names and "set_led" in names
                reading = await client.call_tool("read_temperature", {})
                assert not reading.is_error and "celsius" in reading.structured_content
                assert len(login.asked) == 1   # a read-only tool: the read token does
                # An act tool: 403 insufficient_scope, the SDK authorizes again for both.
                lit = await client.call_tool("set_led", {"on": True})
                assert not lit.is_error, lit
                assert lit.structured_content["on"] is True
                assert len(login.asked) == 2
                assert set(login.asked[1].split()) - {"offline_access"} == {"tinymcp.read",
                                                                             "tinymcp.act"}
                volts = await client.call_tool("read_adc", {"channel": 2})
                assert volts.structured_content["volts"] > 2   # the LED is lit
        return storage.tokens.access_token
    token = asyncio.run(main())
    claims = json.loads(base64.urlsafe_b64decode(
        token.split(".")[1] + "=" * (-len(token.split(".")[1]) % 4)))
    assert claims["aud"] == url and claims["iss"] == provider.issuer   # RFC 8707
    assert "tinymcp.act" in claims["scope"].split()
    assert token not in bridge.stderr() and token[-20:] not in bridge.stderr()   # never logged


def initialized(url, token):
    response = post(url, INIT, authorization="Bearer " + token)
    assert response.status_code == 200, (response.status_code, response.text)
    sid = response.headers["mcp-session-id"]
    headers = {"authorization": "Bearer " + token, "mcp-session-id": sid,
               "mcp-protocol-version": "2025-11-25"}
    assert post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                **headers).status_code == 202
    return headers


def call(url, headers, name, arguments, rid=7):
    return post(url, {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                      "params": {"name": name, "arguments": arguments}}, **headers)


@windows_covered
def test_a_read_token_is_refused_an_act_tool_with_403_and_an_act_token_is_not(provider,
                                                                               oauth_bridge):
    url, bridge = oauth_bridge(provider.issuer)
    reader = initialized(url, provider.token("reader", "tinymcp.read", url))
    assert call(url, reader, "read_temperature", {}).status_code == 200
    refused = call(url, reader, "set_led", {"on": True})
    assert refused.status_code == 403
    said = challenge(refused)
    assert said["error"] == "insufficient_scope" and said["scope"] == "tinymcp.act"
    assert said["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    assert refused.json()["id"] == 7 and refused.json()["error"]["code"] == -32600
    assert call(url, reader, "read_temperature", {}).status_code == 200   # the session lives
    actor = initialized(url, provider.token("actor", "tinymcp.read tinymcp.act", url))
    assert call(url, actor, "set_led", {"on": True}).status_code == 200


@windows_covered
def test_a_token_for_another_resource_or_signed_with_another_key_is_refused(provider,
                                                                            oauth_bridge):
    url, bridge = oauth_bridge(provider.issuer)
    elsewhere = provider.token("actor", "tinymcp.read tinymcp.act", "http://127.0.0.1:9/mcp")
    refused = post(url, INIT, authorization="Bearer " + elsewhere)
    assert refused.status_code == 401 and challenge(refused)["error"] == "invalid_token"
    # A key of our own, named as the provider's key, claiming the provider as issuer.
    forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    forged = jwt.encode({"iss": provider.issuer, "aud": url, "sub": "mallory", "iat": now,
                         "exp": now + 300, "scope": "tinymcp.read tinymcp.act"}, forger,
                        algorithm="RS256", headers={"kid": "provider-key"})
    refused = post(url, INIT, authorization="Bearer " + forged)
    assert refused.status_code == 401 and challenge(refused)["error"] == "invalid_token"
    assert post(url, INIT, authorization="Bearer " + provider.token(
        "reader", "tinymcp.read", url)).status_code == 200


@windows_covered
def test_expired_foreign_unsigned_and_scopeless_tokens_are_refused(own_issuer, oauth_bridge):
    url, bridge = oauth_bridge(own_issuer.issuer)
    mint = own_issuer.mint
    now = int(time.time())
    public_pem = own_issuer.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    unsigned = jwt.encode({"iss": own_issuer.issuer, "aud": url, "sub": "mallory",
                           "exp": now + 300, "scope": "tinymcp.read tinymcp.act"}, None,
                          algorithm="none", headers={"kid": "own-key"})
    hmac_header = jwt.utils.base64url_encode(json.dumps(
        {"alg": "HS256", "kid": "own-key", "typ": "JWT"}).encode())
    hmac_body = jwt.utils.base64url_encode(json.dumps(
        {"iss": own_issuer.issuer, "aud": url, "sub": "mallory", "exp": now + 300,
         "scope": "tinymcp.read tinymcp.act"}).encode())
    signing = hmac_header + b"." + hmac_body
    with_public_key = (signing + b"." + jwt.utils.base64url_encode(
        hmac.new(public_pem, signing, hashlib.sha256).digest())).decode()
    refused = {
        "expired": mint(url, exp=now - 120, iat=now - 600),
        "not yet valid": mint(url, nbf=now + 600),
        "another issuer": mint(url, iss="http://127.0.0.1:9"),
        "another audience": mint("http://127.0.0.1:9/mcp"),
        "no expiry": mint(url, exp=None),
        "unsigned (alg none)": unsigned,
        "HS256 keyed with the public key": with_public_key,
        "an unknown key id": mint(url, kid="nobody"),
    }
    for why, token in refused.items():
        answer = post(url, INIT, authorization="Bearer " + token)
        assert answer.status_code == 401, (why, answer.status_code)
        assert challenge(answer)["error"] == "invalid_token", why
    scopeless = post(url, INIT, authorization="Bearer " + mint(url, scope=None))
    assert scopeless.status_code == 403 and challenge(scopeless)["scope"] == "tinymcp.read"
    other = post(url, INIT, authorization="Bearer " + mint(url, scope="email profile"))
    assert other.status_code == 403
    good = mint(url)
    assert post(url, INIT, authorization="Bearer " + good).status_code == 200   # the control
    assert good not in bridge.stderr()


@windows_covered
def test_the_dashboard_data_needs_an_access_token_under_oauth(own_issuer, oauth_bridge):
    url, bridge = oauth_bridge(own_issuer.issuer)
    base = url.rsplit("/", 1)[0]
    assert httpx.get(base + "/", timeout=20).status_code == 200   # the page holds nothing
    data = base + "/dashboard/data"
    assert httpx.get(data, timeout=20).status_code == 401
    token = own_issuer.mint(url, scope="tinymcp.read")
    assert httpx.get(data, headers={"authorization": "Bearer " + token},
                     timeout=20).status_code == 200, bridge.stderr()
    scopeless = own_issuer.mint(url, scope=None)
    assert httpx.get(data, headers={"authorization": "Bearer " + scopeless},
                     timeout=20).status_code in (401, 403)


@windows_covered
def test_a_2026_task_belongs_to_the_oauth_subject_that_made_it(own_issuer, oauth_bridge):
    # Each 2026-07-28 POST ends its host session; the task is the subject's, whichever of its
    # tokens asks, and another subject gets the answers a missing task gets.
    url, bridge = oauth_bridge(own_issuer.issuer)
    alice, alice_later = own_issuer.mint(url, sub="alice"), own_issuer.mint(url, sub="alice",
                                                                             jti="second")
    bob = own_issuer.mint(url, sub="bob")
    assert alice != alice_later
    tid = start_sample(url, alice, 60)
    refused_to(url, tid, bob)
    assert polled(url, tid, alice_later, "working")["taskId"] == tid
    cancelled = task_post(url, "tasks/cancel", {"taskId": tid}, bob)
    assert "error" in cancelled
    assert "result" in task_post(url, "tasks/cancel", {"taskId": tid}, alice_later)
    assert polled(url, tid, alice, "cancelled")["taskId"] == tid
