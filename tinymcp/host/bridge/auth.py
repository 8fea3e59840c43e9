# Who a host on HTTP is, and what it may do: no check (--no-auth, loopback only), one static bearer
# token (--token, or the random one a loopback bridge makes), or an OAuth 2.1 resource server
# (--oauth-issuer: the MCP authorization specification, RFC 9728 metadata, JWT access tokens
# checked against the issuer's keys with PyJWT, RFC 8707 audience, scopes tinymcp.read/act).
# Each answers authenticate(headers, scope, public) -> (Caller, None) or (None, a refusal).
import asyncio
import collections
import hmac
import json
import logging
import time
from urllib.parse import urlsplit

from starlette.responses import Response

log = logging.getLogger("tinymcp.bridge.auth")

READ = "tinymcp.read"   # read-only tools (readOnlyHint), resources, prompts, listings
ACT = "tinymcp.act"     # everything else: a tool that changes the board
SCOPES = (READ, ACT)
# Who asks: key is whom the per-client caps count for (an OAuth subject, else the peer
# address); scopes the OAuth scopes it holds, None where the front gives every right.
Caller = collections.namedtuple("Caller", "key scopes")
# Asymmetric signatures only: never "none", never HS* (a public key used as an HMAC secret).
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512",
              "EdDSA")
LEEWAY_SECONDS = 10       # clock skew allowed on exp, nbf and iat
KEYS_REFRESH_SECONDS = 30   # an unknown key id fetches the issuer's keys at most this often
FETCH_SECONDS = 10        # how long the issuer has to answer
MAX_DOCUMENT = 256 << 10  # the issuer's metadata or key set, at most


def peer(scope):
    client = scope.get("client")
    return "peer %s" % (client[0] if client else "?")


def bearer(headers):
    # The token of an "Authorization: Bearer TOKEN" header (the scheme in any case), or None.
    scheme, _, given = headers.get("authorization", "").partition(" ")
    return given.strip() if scheme.lower() == "bearer" and given.strip() else None


class Open:
    # --no-auth (loopback only): anyone who passes the Host/Origin checks, known by address.
    oauth = False

    async def authenticate(self, headers, scope, public):
        return Caller(peer(scope), None), None

    def caller(self, headers, scope, public):
        # authenticate()'s Caller where it has one at once (the express lane), else None.
        return Caller(peer(scope), None)


class StaticToken:
    # One shared bearer token, compared in constant time. Everyone holding it is the same
    # principal, so the caps count by peer address.
    oauth = False

    def __init__(self, token):
        self.token = token.encode()

    async def authenticate(self, headers, scope, public):
        given = bearer(headers)
        if public or (given is not None and hmac.compare_digest(given.encode(), self.token)):
            return Caller(peer(scope), None), None
        return None, _json_refusal(401, "Unauthorized: a bearer token is required", "Bearer")

    def caller(self, headers, scope, public):
        # authenticate()'s Caller, or None where it refuses (the general way says why).
        given = bearer(headers)
        if public or (given is not None and hmac.compare_digest(given.encode(), self.token)):
            return Caller(peer(scope), None)
        return None


def _json_refusal(status, message, challenge):
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    return Response(json.dumps(body), status_code=status, media_type="application/json",
                    headers={"WWW-Authenticate": challenge})


def metadata_url(resource):
    # RFC 9728 3.1: /.well-known/oauth-protected-resource inserted before the resource's path.
    parts = urlsplit(resource)
    path = parts.path if parts.path != "/" else ""
    return "%s://%s/.well-known/oauth-protected-resource%s" % (parts.scheme, parts.netloc, path)


class TokenRefused(Exception):
    # A token that does not hold; the message is for the log and error_description, never the
    # token itself.
    pass


class IssuerKeys:
    # The issuer's signing keys: its jwks_uri found in its metadata (RFC 8414, then OpenID
    # Connect discovery), the key set fetched once, again when a token names a key id not in
    # it (a rotation), at most once per KEYS_REFRESH_SECONDS.

    def __init__(self, issuer, fetch):
        self.issuer = issuer
        self.fetch = fetch          # async fn(url) -> parsed JSON (raises on failure)
        self.jwks_uri = None
        self.keys = {}              # kid -> (PyJWK, the alg the key set names for it or None)
        self.fetched_at = None      # monotonic time of the last fetch of the key set
        self.lock = asyncio.Lock()

    def _metadata_urls(self):
        parts = urlsplit(self.issuer)
        base = "%s://%s" % (parts.scheme, parts.netloc)
        path = parts.path.rstrip("/")
        return [base + "/.well-known/oauth-authorization-server" + path,
                base + path + "/.well-known/openid-configuration",
                base + "/.well-known/openid-configuration" + path]

    async def _discover(self):
        problems = []
        for url in self._metadata_urls():
            try:
                metadata = await self.fetch(url)
            except Exception as e:   # try the next well-known place
                problems.append("%s: %r" % (url, e))
                continue
            if type(metadata) is not dict or metadata.get("issuer") != self.issuer:
                problems.append("%s names issuer %r" % (url, metadata.get("issuer")
                                                       if type(metadata) is dict else None))
                continue
            if type(metadata.get("jwks_uri")) is not str:
                problems.append("%s has no jwks_uri" % url)
                continue
            return metadata["jwks_uri"]
        raise TokenRefused("the issuer's metadata could not be had (%s)" % "; ".join(problems))

    async def _load(self):
        import jwt
        if self.jwks_uri is None:
            self.jwks_uri = await self._discover()
        found = await self.fetch(self.jwks_uri)
        self.fetched_at = time.monotonic()
        keys = {}
        for jwk in (found.get("keys") if type(found) is dict else None) or []:
            if type(jwk) is not dict or jwk.get("use", "sig") != "sig":
                continue
            try:
                key = jwt.PyJWK.from_dict(jwk)
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
                continue   # a key of a kind PyJWT cannot use: never one to trust
            keys[jwk.get("kid")] = (key, jwk.get("alg"))
        self.keys = keys

    async def key(self, kid):
        async with self.lock:
            if kid not in self.keys and (self.fetched_at is None or time.monotonic()
                                         - self.fetched_at >= KEYS_REFRESH_SECONDS):
                try:
                    await self._load()
                except TokenRefused:
                    raise
                except Exception as e:
                    raise TokenRefused("the issuer's keys could not be had: %r" % e) from None
        found = self.keys.get(kid)
        if found is None:
            raise TokenRefused("signed with a key the issuer does not publish")
        return found


class OAuth:
    # The bridge as an OAuth 2.1 resource server for one authorization server (issuer) and one
    # resource identifier (the /mcp URL hosts use, --public-url).
    oauth = True

    def __init__(self, issuer, resource):
        self.issuer = issuer
        self.resource = resource
        self.metadata_url = metadata_url(resource)
        path = urlsplit(self.metadata_url).path
        self.paths = {"/.well-known/oauth-protected-resource", path}
        self.issuer_keys = IssuerKeys(issuer, self._fetch)

    def metadata(self):
        # RFC 9728 2, as the official SDK models it.
        from mcp.shared.auth import ProtectedResourceMetadata
        return ProtectedResourceMetadata(
            resource=self.resource, authorization_servers=[self.issuer],
            scopes_supported=list(SCOPES), bearer_methods_supported=["header"],
            resource_name="tinymcp-bridge")

    def routes(self):
        from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
        from starlette.routing import Route
        handle = ProtectedResourceMetadataHandler(self.metadata()).handle
        return [Route(path, handle, methods=["GET"]) for path in sorted(self.paths)]

    def public(self, method, path):
        return method == "GET" and path in self.paths

    async def _fetch(self, url):
        # One document of the issuer's (rare: its metadata and keys), fetched in a thread: a
        # plain blocking client, whatever the event loop (Windows' proactor, or its shim).
        return await asyncio.to_thread(self._fetch_now, url)

    @staticmethod
    def _fetch_now(url):
        import httpx2
        with httpx2.Client(timeout=FETCH_SECONDS, follow_redirects=False) as http:
            with http.stream("GET", url, headers={"accept": "application/json"}) as got:
                if got.status_code != 200:
                    raise TokenRefused("%s answered %d" % (url, got.status_code))
                body = bytearray()
                for chunk in got.iter_bytes():
                    body += chunk
                    if len(body) > MAX_DOCUMENT:
                        raise TokenRefused("%s is larger than %d bytes" % (url, MAX_DOCUMENT))
        return json.loads(bytes(body))

    async def close(self):
        pass

    def challenge(self, error=None, description=None, scope=READ):
        # WWW-Authenticate for a 401 or 403: where the metadata is, and the scope needed.
        parts = []
        if error:
            parts.append('error="%s"' % error)
        if description:
            parts.append('error_description="%s"' % description.replace('"', "'")[:200])
        if scope:
            parts.append('scope="%s"' % scope)
        parts.append('resource_metadata="%s"' % self.metadata_url)
        return "Bearer " + ", ".join(parts)

    def refusal(self, status, message, error=None, scope=READ):
        return _json_refusal(status, message, self.challenge(error, error and message, scope))

    async def verify(self, token):
        # -> the token's claims; TokenRefused when it does not hold.
        import jwt
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenRefused("not a JWT") from None
        alg = header.get("alg")
        if alg not in ALGORITHMS:
            raise TokenRefused("signed with %r: only asymmetric signatures are accepted"
                          % str(alg)[:20])
        key, named = await self.issuer_keys.key(header.get("kid"))
        if named is not None and named != alg:   # PyJWT checks the key's type against alg
            raise TokenRefused("the key is for %s, not %s" % (str(named)[:20], alg))
        audience = [self.resource, self.resource.rstrip("/"), self.resource.rstrip("/") + "/"]
        try:
            return jwt.decode(token, key.key, algorithms=[alg], audience=audience,
                              issuer=self.issuer, leeway=LEEWAY_SECONDS,
                              options={"require": ["exp", "iss", "aud"]})
        except jwt.PyJWTError as e:
            raise TokenRefused(str(e)[:120]) from None

    async def authenticate(self, headers, scope, public):
        if public:
            return Caller(peer(scope), None), None
        token = bearer(headers)
        if token is None:
            return None, self.refusal(401, "Unauthorized: an OAuth access token is required "
                                      "(see the resource metadata)")
        try:
            claims = await self.verify(token)
        except TokenRefused as e:
            log.info("http: refused an access token: %s", e)
            return None, self.refusal(401, "Unauthorized: the access token is not valid here: "
                                      "%s" % e, error="invalid_token")
        granted = claims.get("scope")
        granted = granted.split() if type(granted) is str else claims.get("scp")
        granted = frozenset(s for s in granted or () if type(s) is str)
        who = claims.get("sub") or claims.get("client_id") or "?"
        if scope.get("path") != "/mcp" and READ not in granted:   # the dashboard's data
            return None, self.refusal(403, "Forbidden: this needs the OAuth scope " + READ,
                                      error="insufficient_scope")
        return Caller("oauth %s" % str(who)[:200], granted), None
