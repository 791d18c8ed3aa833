"""A fake Threads: its OAuth 2 (tests.support.fakes.oauth: no PKCE, the client's secret
in form fields, scopes comma-separated, the redirect ending in `#_` as Threads' does;
the token endpoint answers a short-lived token and `user_id`, no refresh token, and its
errors in Threads' `{"error_type", "code", "error_message"}` shape), the long-lived
tokens (`GET /access_token?grant_type=th_exchange_token` with the app secret, `GET
/refresh_access_token?grant_type=th_refresh_token`), and the Graph calls the connector
makes, checking what Threads checks (from its public documentation): a valid token (in
the `access_token` parameter, or a bearer header) with the permissions each call
needs, a container before its publishing (an unknown, another user's, expired or
already published creation id is refused), TEXT containers of at most 500 characters
(an emoji counts its UTF-8 bytes), replies only to a post that exists, 250 posts and
1,000 replies per profile in a moving 24 hours, and Graph's error shape
(`{"error": {"message", "type", "code", "error_subcode", "fbtrace_id"}}`).

Time: tokens live an hour (short-lived) or 60 days (long-lived), containers a day;
`advance(seconds)` moves the fake's clock. `expire_tokens()` (inherited) makes the API
refuse every token issued so far (Graph error 190), and their renewal too: Threads
renews only an unexpired token (so a refused token means the account is connected
again; the service renews tokens well before they expire). Past their lifetime
(`advance`), tokens are refused alike. `revoke_grants()` (the user removed
the app) makes the API and the renewal refuse them (190, subcode 458). Threads' rule
that a token must be a day old before its renewal is not enforced."""
from __future__ import annotations

import itertools
import time
from urllib.parse import parse_qs

from tests.support.fakes.oauth import CLIENT_SECRET, FakeOAuthPlatform, FakeUser
from tests.support.platform_servers import Call, bearer

SCOPES = ("threads_basic", "threads_content_publish", "threads_manage_replies", "threads_manage_insights")
TEXT_LIMIT = 500
POSTS_PER_DAY = 250
REPLIES_PER_DAY = 1000
DAY = 24 * 3600
SHORT_LIVED = 3600
LONG_LIVED = 5183944  # the expires_in of Threads' documented example: about 60 days
POST_METRICS = frozenset({"views", "likes", "replies", "reposts", "quotes", "shares"})
USER_METRICS = frozenset({"views", "likes", "replies", "reposts", "quotes", "clicks", "followers_count"})
USER_FIELDS = frozenset({"id", "username", "name", "threads_profile_picture_url", "threads_biography"})
LIMIT_FIELDS = frozenset({"quota_usage", "config", "reply_quota_usage", "reply_config"})
MEDIA_FIELDS = frozenset({"id", "permalink", "text", "media_type", "timestamp", "username", "shortcode", "is_reply"})
_EMOJI = ((0x1F000, 0x1FAFF), (0x2600, 0x27BF), (0x2300, 0x23FF), (0x2B00, 0x2BFF), (0xFE00, 0xFE0F),
          (0x200D, 0x200D), (0xE0020, 0xE007F))


def threads_length(text: str) -> int:
    """A text's length as Threads counts it: characters, an emoji (Unicode's emoji
    blocks, joiners and variation selectors, approximately) counting its UTF-8 bytes."""
    return sum(len(ch.encode()) if any(low <= ord(ch) <= high for low, high in _EMOJI) else 1 for ch in text)


def graph_error(status: int, code: int, message: str, *, subcode: int | None = None, user_msg: str | None = None,
                transient: bool = False, headers: dict | None = None):
    error = {"message": message, "type": "OAuthException", "code": code, "is_transient": transient,
             "fbtrace_id": "AbCdEfGhIjKlMnOp"}
    if subcode is not None:
        error["error_subcode"] = subcode
    if user_msg is not None:
        error["error_user_title"], error["error_user_msg"] = message, user_msg
    return status, dict(headers or {}), {"error": error}


def _invalid(message: str, user_msg: str | None = None, *, subcode: int | None = None):
    return graph_error(400, 100, message, subcode=subcode, user_msg=user_msg)


def _fields(params: dict, allowed: frozenset, node: str, default: str = "id"):
    """The fields asked for, or the error for one the node does not have."""
    asked = [name for name in params.get("fields", default).split(",") if name]
    unknown = [name for name in asked if name not in allowed]
    if unknown:
        return None, _invalid(f"(#100) Tried accessing nonexisting field ({unknown[0]}) on node type ({node})")
    return asked, None


class FakeThreads(FakeOAuthPlatform):
    label = "Threads"
    expected_handle = "@acme"
    required_scopes = frozenset(SCOPES)
    scope_separator = ","
    pkce_required = False
    client_auth = "client_secret_post"
    access_lifetime = SHORT_LIVED
    issues_refresh_tokens = False
    refreshes_refused_tokens = False

    def __init__(self, *users: FakeUser):
        super().__init__(*(users or (FakeUser("25025320990357192", "acme", {"followers": 321}),)))
        self.offset = 0.0
        self.lifetime: dict[str, tuple[float, float, str]] = {}  # token -> (born, seconds, "short" | "long")
        self.containers: dict[str, dict] = {}
        self.media: dict[str, dict] = {}
        self.published_at: dict[tuple[str, bool], list[float]] = {}  # (user, is a reply) -> times
        self._ids = itertools.count(17_890_000_000_000_001)

    # -- time and tokens --------------------------------------------------------------

    def now(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.offset += seconds

    def _born(self, token: str, seconds: float, kind: str) -> None:
        self.lifetime[token] = (self.now(), seconds, kind)

    def _long_lived(self, user_id: str, scopes: set) -> str:
        token = f"THQVJlong{next(self._counter)}x{int(self.now())}"
        self.access_tokens[token] = (user_id, set(scopes))
        self._born(token, LONG_LIVED, "long")
        return token

    def issue(self, user_id: str, scopes: set | None = None) -> tuple[str, str]:
        """A long-lived token, as a connected account holds it (also its renewal credential)."""
        with self.lock:
            token = self._long_lived(user_id, set(scopes or self.required_scopes))
            return token, token

    def token_answer(self, access: str, refresh: str | None, scopes: set) -> dict:
        # Threads: a short-lived token and the user's id; no expires_in, no refresh token.
        self._born(access, SHORT_LIVED, "short")
        return {"access_token": access, "user_id": int(self.access_tokens[access][0])}

    def _authorize(self, call: Call):
        status, headers, body = super()._authorize(call)
        if status == 302 and "code=" in headers.get("Location", ""):
            headers = {"Location": headers["Location"] + "#_"}
        return status, headers, body

    def _token(self, call: Call):
        form = {key: values[-1] for key, values in parse_qs(call.raw.decode(errors="replace")).items()}
        if form.get("grant_type") == "refresh_token":
            status, headers, body = 400, {}, {"error_description": "Unsupported grant_type: Threads renews "
                                                                   "long-lived tokens at /refresh_access_token"}
        else:
            status, headers, body = super()._token(call)
        if status >= 400 and isinstance(body, dict):
            body = {"error_type": "OAuthException", "code": status,
                    "error_message": body.get("error_description") or body.get("error") or "Invalid request"}
        return status, headers, body

    def _refusal(self, token: str | None, *, renewing: bool = False):
        """Why a token is refused (a Graph error), or None when it is good."""
        if token is None or token not in self.access_tokens:
            return graph_error(400, 190, "Invalid OAuth access token - Cannot parse access token")
        if self.revoked:
            return graph_error(400, 190, "Error validating access token: The user has not authorized application.",
                               subcode=458)
        born, seconds, _kind = self.lifetime.get(token, (self.now(), SHORT_LIVED, "short"))
        if self.now() > born + seconds or token in self.expired:
            return graph_error(400, 190, "Error validating access token: Session has expired.", subcode=463)
        return None

    @staticmethod
    def _token_of(call: Call, params: dict) -> str | None:
        return params.get("access_token") or bearer(call)

    def user_of(self, call: Call) -> FakeUser | None:
        token = self._token_of(call, self._params(call))
        return None if self._refusal(token) else self.users.get(self.access_tokens[token][0])

    def scopes_of(self, call: Call) -> set:
        return set(self.access_tokens.get(self._token_of(call, self._params(call)), ("", set()))[1])

    def error_body(self, status: int):
        if status == 429:
            return graph_error(429, 4, "Application request limit reached", transient=True)[2]
        if status >= 500:
            return graph_error(status, 2, "An unexpected error has occurred. Please retry your request later.",
                               transient=True)[2]
        if status == 401:
            return graph_error(401, 190, "Invalid OAuth access token - Cannot parse access token")[2]
        return graph_error(status, 1, "An unknown error occurred")[2]

    # -- the API ------------------------------------------------------------------------

    @staticmethod
    def _params(call: Call) -> dict:
        """Graph reads parameters from the query string and a form body alike."""
        params = dict(call.query)
        if call.raw and "application/x-www-form-urlencoded" in call.headers.get("content-type", ""):
            params.update({key: values[-1] for key, values in parse_qs(call.raw.decode(errors="replace")).items()})
        return params

    def route_api(self, call: Call, path: str):
        params = self._params(call)
        if call.method == "GET" and path == "/access_token":
            return self._exchange_long_lived(params)
        if call.method == "GET" and path == "/refresh_access_token":
            return self._renew(params)
        token = self._token_of(call, params)
        refused = self._refusal(token)
        if refused:
            return refused
        user, scopes = self.users[self.access_tokens[token][0]], self.access_tokens[token][1]
        if "threads_basic" not in scopes:
            return self._missing("threads_basic")
        parts = path.strip("/").split("/")
        if parts[0] == "me":
            parts[0] = user.id
        if len(parts) == 1 and parts[0] == user.id and call.method == "GET":
            asked, problem = _fields(params, USER_FIELDS, "ThreadsUser")
            if problem:
                return problem
            known = {"id": user.id, "username": user.handle, "name": user.handle.title(), "threads_biography": "",
                     "threads_profile_picture_url": "https://scontent.cdninstagram.com/acme.jpg"}
            return 200, {}, {name: known[name] for name in asked}
        if len(parts) == 2 and parts[0] == user.id:
            return self._user_edge(call.method, parts[1], params, user, scopes)
        if len(parts) == 2 and parts[1] == "insights" and call.method == "GET":
            return self._media_insights(parts[0], params, user, scopes)
        if len(parts) == 1 and call.method == "GET":
            return self._node(parts[0], params, user)
        if parts[0] in self.users or parts[0].isdigit():
            return _invalid(f"Unsupported {call.method.lower()} request. Object with ID '{parts[0]}' does not exist, "
                            "cannot be loaded due to missing permissions, or does not support this operation",
                            subcode=33)
        return graph_error(400, 2500, "Unknown path components: " + path)

    @staticmethod
    def _missing(*permissions: str):
        return graph_error(403, 10, "Application does not have permission for this action",
                           user_msg=f"The token lacks the {', '.join(permissions)} permission.")

    def _user_edge(self, method: str, edge: str, params: dict, user: FakeUser, scopes: set):
        if method == "POST" and edge == "threads":
            return self._create_container(params, user, scopes)
        if method == "POST" and edge == "threads_publish":
            return self._publish(params, user, scopes)
        if method == "GET" and edge == "threads_publishing_limit":
            return self._limits(params, user, scopes)
        if method == "GET" and edge == "threads_insights":
            return self._user_insights(params, user, scopes)
        return graph_error(400, 2500, f"Unknown path components: /{edge}")

    # -- publishing -----------------------------------------------------------------------

    def _create_container(self, params: dict, user: FakeUser, scopes: set):
        reply_to = params.get("reply_to_id")
        needed = {"threads_content_publish"} | ({"threads_manage_replies"} if reply_to else set())
        if not needed <= scopes:
            return self._missing(*sorted(needed - scopes))
        media_type = params.get("media_type")
        if media_type not in ("TEXT", "IMAGE", "VIDEO", "CAROUSEL"):
            return _invalid("Invalid parameter", "media_type must be one of TEXT, IMAGE, VIDEO, CAROUSEL.")
        if media_type != "TEXT":
            return _invalid("Invalid parameter", f"This fake takes TEXT containers only, not {media_type}.")
        text = params.get("text")
        if not text or not text.strip():
            return _invalid("Invalid parameter", "The text parameter is required for a text post.")
        length = threads_length(text)
        if length > TEXT_LIMIT:
            return _invalid("Invalid parameter", f"The text is {length} characters long; the limit is {TEXT_LIMIT}.")
        if reply_to is not None and reply_to not in self.media:
            return _invalid("Invalid parameter", "The post replied to (reply_to_id) does not exist.", subcode=33)
        container_id = str(next(self._ids))
        self.containers[container_id] = {"id": container_id, "owner": user.id, "text": text, "reply_to": reply_to,
                                         "created": self.now(), "published": None}
        return 200, {}, {"id": container_id}

    def _publish(self, params: dict, user: FakeUser, scopes: set):
        container = self.containers.get(params.get("creation_id", ""))
        if container is None or container["owner"] != user.id:
            return graph_error(400, 24, "The requested resource does not exist", subcode=4279009,
                               user_msg="The media with id " + params.get("creation_id", "") + " cannot be found.")
        reply = container["reply_to"] is not None
        needed = {"threads_content_publish"} | ({"threads_manage_replies"} if reply else set())
        if not needed <= scopes:
            return self._missing(*sorted(needed - scopes))
        if container["published"]:
            return _invalid("Invalid parameter", "This media container was already published.")
        if self.now() > container["created"] + DAY:
            return _invalid("Invalid parameter", "This media container expired: it was not published within 24 hours.")
        recent = self._recent(user.id, reply)
        limit = REPLIES_PER_DAY if reply else POSTS_PER_DAY
        if len(recent) >= limit:
            return graph_error(400, 9, "Application request limit reached",
                               user_msg=f"The profile reached the {limit} {'replies' if reply else 'posts'} "
                                        "it may publish through the API in 24 hours.")
        self.published_at[(user.id, reply)] = recent + [self.now()]
        media_id = str(next(self._ids))
        shortcode = f"C{int(media_id) % 10**10:010d}"
        container["published"] = media_id
        self.media[media_id] = {
            "id": media_id, "owner": user.id, "text": container["text"], "reply_to": container["reply_to"],
            "shortcode": shortcode, "permalink": f"https://www.threads.net/@{user.handle}/post/{shortcode}",
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(self.now())),
            "metrics": {"views": 120, "likes": 9, "replies": 2, "reposts": 1, "quotes": 1, "shares": 0},
        }
        return 200, {}, {"id": media_id}

    def _recent(self, user_id: str, reply: bool) -> list[float]:
        return [at for at in self.published_at.get((user_id, reply), []) if self.now() - at < DAY]

    def fill_quota(self, user_id: str, count: int, *, replies: bool = False) -> None:
        """`count` publications by the user just now, as if made elsewhere."""
        with self.lock:
            self.published_at.setdefault((user_id, replies), []).extend([self.now()] * count)

    def _limits(self, params: dict, user: FakeUser, scopes: set):
        asked, problem = _fields(params, LIMIT_FIELDS, "ThreadsPublishingLimit", default="quota_usage")
        if problem:
            return problem
        needed = {"threads_content_publish"} | (
            {"threads_manage_replies"} if {"reply_quota_usage", "reply_config"} & set(asked) else set())
        if not needed <= scopes:
            return self._missing(*sorted(needed - scopes))
        known = {"quota_usage": len(self._recent(user.id, False)),
                 "config": {"quota_total": POSTS_PER_DAY, "quota_duration": DAY},
                 "reply_quota_usage": len(self._recent(user.id, True)),
                 "reply_config": {"quota_total": REPLIES_PER_DAY, "quota_duration": DAY}}
        return 200, {}, {"data": [{name: known[name] for name in asked}]}

    # -- reading ------------------------------------------------------------------------

    def _metrics_asked(self, params: dict, allowed: frozenset):
        asked = [name for name in params.get("metric", "").split(",") if name]
        if not asked:
            return None, _invalid("(#100) The parameter metric is required")
        unknown = [name for name in asked if name not in allowed]
        if unknown:
            return None, _invalid(f"(#100) metric[0] must be one of the following values: {', '.join(sorted(allowed))}")
        return asked, None

    def _media_insights(self, media_id: str, params: dict, user: FakeUser, scopes: set):
        if "threads_manage_insights" not in scopes:
            return self._missing("threads_manage_insights")
        media = self.media.get(media_id)
        if media is None or media["owner"] != user.id:
            return _invalid(f"Unsupported get request. Object with ID '{media_id}' does not exist, cannot be loaded "
                            "due to missing permissions, or does not support this operation", subcode=33)
        asked, problem = self._metrics_asked(params, POST_METRICS)
        if problem:
            return problem
        return 200, {}, {"data": [
            {"name": name, "period": "lifetime", "values": [{"value": media["metrics"][name]}], "title": name.title(),
             "description": f"The number of {name} of your post.", "id": f"{media_id}/insights/{name}/lifetime"}
            for name in asked
        ]}

    def _user_insights(self, params: dict, user: FakeUser, scopes: set):
        if "threads_manage_insights" not in scopes:
            return self._missing("threads_manage_insights")
        asked, problem = self._metrics_asked(params, USER_METRICS)
        if problem:
            return problem
        values = {"followers_count": user.extra.get("followers", 0)}
        return 200, {}, {"data": [
            {"name": name, "period": "day", "title": name, "description": f"The {name} of the profile.",
             "total_value": {"value": values.get(name, 0)}, "id": f"{user.id}/insights/{name}/day"}
            for name in asked
        ]}

    def _node(self, node_id: str, params: dict, user: FakeUser):
        container = self.containers.get(node_id)
        if container is not None and container["owner"] == user.id:
            status = "PUBLISHED" if container["published"] else (
                "EXPIRED" if self.now() > container["created"] + DAY else "FINISHED")
            return 200, {}, {"id": node_id, "status": status}
        media = self.media.get(node_id)
        if media is None or media["owner"] != user.id:
            return _invalid(f"Unsupported get request. Object with ID '{node_id}' does not exist, cannot be loaded "
                            "due to missing permissions, or does not support this operation", subcode=33)
        asked, problem = _fields(params, MEDIA_FIELDS, "ThreadsMedia")
        if problem:
            return problem
        known = {**media, "media_type": "TEXT_POST", "username": user.handle, "is_reply": media["reply_to"] is not None}
        return 200, {}, {name: known[name] for name in asked}

    # -- the long-lived tokens ----------------------------------------------------------

    def _exchange_long_lived(self, params: dict):
        if params.get("grant_type") != "th_exchange_token":
            return _invalid("Invalid parameter", "grant_type must be th_exchange_token.")
        if params.get("client_secret") != CLIENT_SECRET:
            return graph_error(400, 1, "Error validating client secret.")
        token = params.get("access_token")
        refused = self._refusal(token)
        if refused:
            return refused
        if self.lifetime.get(token, (0, 0, "short"))[2] != "short":
            return _invalid("Invalid parameter", "Only a short-lived token can be exchanged for a long-lived one.")
        user_id, scopes = self.access_tokens[token]
        return 200, {}, {"access_token": self._long_lived(user_id, scopes), "token_type": "bearer",
                         "expires_in": LONG_LIVED}

    def _renew(self, params: dict):
        if params.get("grant_type") != "th_refresh_token":
            return _invalid("Invalid parameter", "grant_type must be th_refresh_token.")
        token = params.get("access_token")
        refused = self._refusal(token, renewing=True)
        if refused:
            return refused
        if self.lifetime.get(token, (0, 0, "short"))[2] != "long":
            return _invalid("Invalid parameter", "Only a long-lived token can be refreshed.")
        user_id, scopes = self.access_tokens[token]
        return 200, {}, {"access_token": self._long_lived(user_id, scopes), "token_type": "bearer",
                         "expires_in": LONG_LIVED}

    # -- what the journeys read ---------------------------------------------------------

    def published_texts(self) -> list[str]:
        with self.lock:
            return [media["text"] for media in self.media.values() if media["reply_to"] is None]

    def reply_texts(self) -> list[str]:
        with self.lock:
            return [media["text"] for media in self.media.values() if media["reply_to"] is not None]

    def follower_count(self) -> int:
        return next(iter(self.users.values())).extra.get("followers", 0)
