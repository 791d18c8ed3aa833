"""A fake Facebook: Facebook Login's OAuth 2 (tests.support.fakes.oauth) and the Graph
API calls of the Pages connector, checking what Facebook checks (from its public
documentation: Facebook Login's manual flow, access tokens, the Pages API's posts,
comments and insights, Graph API error handling and rate limiting):

- the token endpoint (`GET` or `POST /oauth/access_token`, here at the shared fake's
  token path): the client id and secret as request fields, the code used once and
  with the redirect URI of the dialog, `fb_exchange_token` for a long-lived token;
  no refresh tokens (no `refresh_token` grant); Graph-shaped errors;
- `GET /me/accounts`: the user's pages (two by default, so the service asks which
  one), each with its tasks and its own page token, paged with cursors;
- `POST /{page-id}/feed` and `POST /{post-id}/comments`: a page token of that page,
  the permissions (`pages_manage_posts`, `pages_read_engagement`,
  `pages_manage_engagement`), a message, 63,206 characters at most, no duplicate of
  the page's last post (506);
- `GET /{post-id}?fields=...` (reaction, comment and share counts),
  `GET /{post-id}/insights?metric=post_media_view` (`read_insights`; the deprecated
  `post_impressions` is refused), `GET /{page-id}?fields=followers_count`;
- tokens: a user token cannot post as a page, a page token cannot list pages; an
  expired token (`expire_tokens`) is refused with code 190/463, every token of a user
  who removed the app (`revoke_grants`) with 190/458;
- a throttled page (`throttle`) answers code 80001 with `X-Business-Use-Case-Usage`
  naming `estimated_time_to_regain_access` in minutes; page-token answers carry that
  header as Facebook's do.

Errors have Graph's shape: {"error": {"message", "type", "code", "error_subcode",
"fbtrace_id"}}, mostly with HTTP 400, as Facebook answers them."""
from __future__ import annotations

import base64
import itertools
import json
import re
import secrets as random
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode

from tests.support.fakes.oauth import (
    CLIENT_ID,
    CLIENT_SECRET,
    TOKEN_PATH,
    FakeOAuthPlatform,
    FakeUser,
)
from tests.support.platform_servers import Call, bearer

MESSAGE_LIMIT = 63206
LONG_LIVED_SECONDS = 5183944  # about 60 days, as Facebook answers the exchange
ALL_TASKS = ("ANALYZE", "ADVERTISE", "MODERATE", "CREATE_CONTENT", "MANAGE")
VIEWS_METRICS = {"post_media_view", "post_total_media_view_unique"}
DEPRECATED_METRICS = {"post_impressions", "post_impressions_unique", "post_impressions_paid"}
DEFAULT_LIMIT = 25


@dataclass
class FakePage:
    id: str
    name: str
    manager: str  # the user id who manages it
    tasks: tuple = ALL_TASKS
    followers: int = 0
    insights: bool = True  # Facebook gives no insights for small pages


@dataclass
class FakePost:
    id: str
    page_id: str
    message: str
    reactions: int = 12
    shares: int = 3
    views: int = 240
    comments: list = field(default_factory=list)


def graph_error(status: int, code: int, message: str, *, subcode: int | None = None, transient: bool | None = None,
                headers: dict | None = None, error_type: str = "OAuthException"):
    error = {"message": message, "type": error_type, "code": code, "fbtrace_id": "A" + random.token_urlsafe(8)}
    if subcode is not None:
        error["error_subcode"] = subcode
    if transient is not None:
        error["is_transient"] = transient
    return status, dict(headers or {}), {"error": error}


def _fields(value: str) -> list[tuple[str, str]]:
    """`a.summary(x).limit(0),b` as [("a", ".summary(x).limit(0)"), ("b", "")]: commas
    inside parentheses do not split."""
    parts, depth, current = [], 0, ""
    for ch in value:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        current += ch
    parts.append(current)
    fields = []
    for part in filter(None, (p.strip() for p in parts)):
        match = re.match(r"^([a-z_]+)(.*)$", part)
        fields.append((match.group(1), match.group(2)) if match else (part, ""))
    return fields


class _Caller:
    def __init__(self, kind: str, user_id: str, scopes: set, page_id: str | None = None):
        self.kind, self.user_id, self.scopes, self.page_id = kind, user_id, scopes, page_id


class FakeFacebook(FakeOAuthPlatform):
    label = "Facebook"
    expected_handle = "Acme Coffee"
    required_scopes = frozenset({"pages_show_list", "pages_manage_posts", "pages_read_engagement",
                                 "pages_manage_engagement", "read_insights"})
    scope_separator = ","
    pkce_required = False
    client_auth = "client_secret_post"
    access_lifetime = 5400  # a short-lived user token: one to two hours
    issues_refresh_tokens = False
    refreshes_refused_tokens = False

    def __init__(self, *users: FakeUser):
        super().__init__(*(users or (FakeUser("10160000000000001", "Ada Admin"),)))
        first = next(iter(self.users))
        self.pages: dict[str, FakePage] = {}
        self.add_page("101000000000001", "Acme Coffee", user=first, followers=4200)
        self.add_page("102000000000002", "Acme Roastery", user=first, followers=310)
        self.page_tokens: dict[str, tuple[str, str, set]] = {}  # token -> (user id, page id, scopes)
        self._page_token_of: dict[tuple[str, str], str] = {}  # (user token, page id) -> page token
        self.long_lived: set[str] = set()
        self.posts: dict[str, FakePost] = {}
        self.comments: dict[str, dict] = {}
        self.throttled: dict[str, int] = {}  # page id -> minutes until it may call again
        self._calls_by_page: dict[str, int] = {}
        self._ids = itertools.count(5_000_000_001)

    # -- setting it up ------------------------------------------------------------------

    def add_page(self, page_id: str, name: str, *, user: str | None = None, tasks=ALL_TASKS, followers: int = 0,
                 insights: bool = True) -> FakePage:
        page = FakePage(page_id, name, user or next(iter(self.users)), tuple(tasks), followers, insights)
        self.pages[page_id] = page
        return page

    def page_token(self, page_id: str, scopes: set | None = None) -> str:
        """A page token of a page, as if read from /me/accounts (for connector tests)."""
        with self.lock:
            page = self.pages[page_id]
            token = f"page-{page_id}-{random.token_hex(8)}"
            self.page_tokens[token] = (page.manager, page_id, set(scopes or self.required_scopes))
            return token

    def throttle(self, page_id: str, minutes: int) -> None:
        """The page's calls are refused (code 80001) for `minutes`, as after too many."""
        with self.lock:
            self.throttled[page_id] = minutes

    # -- what the journeys read -------------------------------------------------------

    def published_texts(self) -> list[str]:
        with self.lock:
            return [post.message for post in self.posts.values()]

    def reply_texts(self) -> list[str]:
        with self.lock:
            return [comment["message"] for comment in self.comments.values()]

    def follower_count(self) -> int:
        return next(iter(self.pages.values())).followers

    # -- switches ---------------------------------------------------------------------

    def expire_tokens(self) -> None:
        with self.lock:
            self.expired.update(self.access_tokens)
            self.expired.update(self.page_tokens)

    def error_body(self, status: int):
        if status >= 500:
            return graph_error(status, 2, "An unexpected error has occurred. Please retry your request later.",
                               transient=True)[2]
        if status == 429:
            return graph_error(status, 4, "(#4) Application request limit reached", transient=True)[2]
        return graph_error(status, 100, "Invalid parameter")[2]

    # -- the token endpoint -------------------------------------------------------------

    def route(self, call: Call):
        if call.path == TOKEN_PATH:
            return self._token_endpoint(call)
        return super().route(call)

    def _token_endpoint(self, call: Call):
        params = dict(call.query)
        if call.method == "POST":
            if call.raw and "application/x-www-form-urlencoded" not in call.headers.get("content-type", ""):
                return graph_error(400, 100, "Invalid request body: parameters must be form-encoded")
            params.update({key: values[-1] for key, values in parse_qs(call.raw.decode()).items()})
        elif call.method != "GET":
            return graph_error(400, 100, f"Unsupported {call.method.lower()} request.")
        if params.get("client_id") != CLIENT_ID:
            return graph_error(400, 101, "Error validating application. Invalid application ID.")
        if params.get("client_secret") != CLIENT_SECRET:
            return graph_error(400, 1, "Error validating client secret.")
        grant_type = params.get("grant_type", "authorization_code")
        if grant_type == "authorization_code":
            return self._code_exchange(params)
        if grant_type == "fb_exchange_token":
            return self._long_lived(params)
        return graph_error(400, 100, f"Invalid grant_type: '{grant_type}'. Supported types: authorization_code, "
                                     "client_credentials, fb_exchange_token")

    def _code_exchange(self, params: dict):
        code = params.get("code")
        if not code:
            return graph_error(400, 100, "Missing authorization code")
        grant = self.grants.get(code)
        if grant is None:
            return graph_error(400, 100, "Invalid verification code format.")
        if grant.used:
            return graph_error(400, 100, "This authorization code has been used.", subcode=36009)
        grant.used = True
        if params.get("redirect_uri") != grant.redirect_uri:
            return graph_error(400, 100, "Error validating verification code. Please make sure your redirect_uri is "
                                         "identical to the one you used in the OAuth dialog request", subcode=36008)
        access, _ = self._new_tokens(grant.user, grant.scopes)
        return 200, {}, {"access_token": access, "token_type": "bearer", "expires_in": self.access_lifetime}

    def _long_lived(self, params: dict):
        token = params.get("fb_exchange_token", "")
        if token in self.expired or token not in self.access_tokens or self.revoked:
            return graph_error(400, 190, "Error validating access token: Session has expired.", subcode=463)
        user, scopes = self.access_tokens[token]
        access, _ = self._new_tokens(user, scopes)
        self.long_lived.add(access)
        return 200, {}, {"access_token": access, "token_type": "bearer", "expires_in": LONG_LIVED_SECONDS}

    # -- the Graph API ------------------------------------------------------------------

    def _caller(self, call: Call, path: str):
        token = bearer(call) or call.query.get("access_token")
        if not token:
            if path.startswith("/me"):
                return graph_error(400, 2500, "An active access token must be used to query information about the "
                                              "current user.")
            return graph_error(400, 104, "An access token is required to request this resource.")
        known = token in self.access_tokens or token in self.page_tokens
        if known and self.revoked:
            return graph_error(400, 190, f"Error validating access token: The user has not authorized application "
                                         f"{CLIENT_ID}.", subcode=458)
        if known and token in self.expired:
            return graph_error(400, 190, "Error validating access token: Session has expired.", subcode=463)
        if token in self.access_tokens:
            user, scopes = self.access_tokens[token]
            return _Caller("user", user, scopes)
        if token in self.page_tokens:
            user, page_id, scopes = self.page_tokens[token]
            return _Caller("page", user, scopes, page_id)
        return graph_error(400, 190, "Invalid OAuth access token - Cannot parse access token")

    def _usage_header(self, page_id: str, minutes: int = 0) -> dict:
        count = self._calls_by_page[page_id] = self._calls_by_page.get(page_id, 0) + 1
        usage = {page_id: [{"type": "pages", "call_count": 100 if minutes else min(count, 99), "total_cputime": 1,
                            "total_time": 1, "estimated_time_to_regain_access": minutes}]}
        return {"X-Business-Use-Case-Usage": json.dumps(usage)}

    def route_api(self, call: Call, path: str):
        caller = self._caller(call, path)
        if not isinstance(caller, _Caller):
            return caller
        headers = {}
        if caller.kind == "page":
            minutes = self.throttled.get(caller.page_id, 0)
            headers = self._usage_header(caller.page_id, minutes)
            if minutes:
                return graph_error(400, 80001, "(#80001) There have been too many calls to this Page account. Wait a "
                                               "bit and try again.", headers=headers)
        status, extra, body = self._route(call, path, caller)
        return status, {**headers, **extra}, body

    def _route(self, call: Call, path: str, caller: _Caller):
        parts = path.strip("/").split("/")
        if call.method == "GET" and parts == ["me", "accounts"]:
            return self._accounts(call, caller)
        if len(parts) == 2 and parts[1] == "feed" and call.method == "POST":
            return self._publish(call, caller, parts[0])
        if len(parts) == 2 and parts[1] == "comments" and call.method == "POST":
            return self._comment(call, caller, parts[0])
        if len(parts) == 2 and parts[1] == "insights" and call.method == "GET":
            return self._insights(call, caller, parts[0])
        if len(parts) == 1 and call.method == "GET" and parts[0] in self.posts:
            return self._read_post(call, caller, self.posts[parts[0]])
        if len(parts) == 1 and call.method == "GET" and parts[0] in self.pages:
            return self._read_page(call, caller, self.pages[parts[0]])
        return self._unsupported(call.method, parts[0] if parts else "")

    @staticmethod
    def _unsupported(method: str, object_id: str):
        return graph_error(400, 100, f"Unsupported {method.lower()} request. Object with ID '{object_id}' does not "
                                     "exist, cannot be loaded due to missing permissions, or does not support this "
                                     "operation.", subcode=33, error_type="GraphMethodException")

    @staticmethod
    def _params(call: Call) -> dict | None:
        """A POST's parameters: a JSON object or form fields (Graph takes both)."""
        if isinstance(call.body, dict):
            return call.body
        if call.body is ValueError:
            return None
        if "application/x-www-form-urlencoded" in call.headers.get("content-type", ""):
            return {key: values[-1] for key, values in parse_qs(call.raw.decode()).items()}
        return dict(call.query)

    def _accounts(self, call: Call, caller: _Caller):
        if caller.kind != "user":
            return graph_error(400, 100, "(#100) Tried accessing nonexisting field (accounts) on node type (Page)")
        if "pages_show_list" not in caller.scopes:
            return 200, {}, {"data": []}
        asked = {name for name, _ in _fields(call.query.get("fields", "id,name"))}
        token = bearer(call) or call.query.get("access_token")
        pages = [page for page in self.pages.values() if page.manager == caller.user_id]
        try:
            limit = max(1, min(int(call.query.get("limit", DEFAULT_LIMIT)), 100))
            start = int(base64.b64decode(call.query["after"]).decode()) if call.query.get("after") else 0
        except (ValueError, TypeError):
            return graph_error(400, 100, "(#100) Invalid cursor or limit")
        rows = []
        for page in pages[start:start + limit]:
            row = {"id": page.id}
            if "name" in asked:
                row["name"] = page.name
            if "tasks" in asked:
                row["tasks"] = list(page.tasks)
            if "access_token" in asked:
                row["access_token"] = self._page_token_for(token, caller, page)
            rows.append(row)
        body: dict = {"data": rows}
        if rows:
            cursor = lambda index: base64.b64encode(str(index).encode()).decode()
            body["paging"] = {"cursors": {"before": cursor(start), "after": cursor(start + len(rows))}}
            if start + len(rows) < len(pages):
                # Facebook's `next` carries the token in its query: a client should not log it.
                query = {**call.query, "access_token": token, "after": cursor(start + len(rows))}
                body["paging"]["next"] = f"{self.base_url}/api/me/accounts?{urlencode(query)}"
        return 200, {}, body

    def _page_token_for(self, user_token: str, caller: _Caller, page: FakePage) -> str:
        key = (user_token, page.id)
        if key not in self._page_token_of:
            kind = "long" if user_token in self.long_lived else "short"
            token = f"page-{page.id}-{kind}-{random.token_hex(8)}"
            self.page_tokens[token] = (caller.user_id, page.id, set(caller.scopes))
            self._page_token_of[key] = token
        return self._page_token_of[key]

    def _page_caller_refusal(self, caller: _Caller, page_id: str, needs: set, task: str):
        """Why a caller may not act as this page: not a page token of it, a missing task
        or permission; None when it may."""
        page = self.pages.get(page_id)
        if caller.kind != "page" or caller.page_id != page_id or page is None:
            return graph_error(403, 200, "(#200) If posting to a page, requires both pages_read_engagement and "
                                         "pages_manage_posts as an admin with sufficient administrative permission")
        if task not in page.tasks:
            return graph_error(403, 200, f"(#200) The user must be able to perform the {task} task on the page")
        missing = sorted(needs - caller.scopes)
        if missing:
            return graph_error(403, 200, f"(#200) Requires the {', '.join(missing)} permission")
        return None

    def _message(self, call: Call):
        params = self._params(call)
        if params is None:
            return None, graph_error(400, 100, "(#100) The request body is not valid JSON")
        message = params.get("message")
        if not isinstance(message, str) or not message.strip():
            return None, graph_error(400, 100, "(#100) Missing message or attachment")
        if len(message) > MESSAGE_LIMIT:
            return None, graph_error(400, 100, f"(#100) The message is {len(message)} characters; the limit is "
                                               f"{MESSAGE_LIMIT}")
        return message, None

    def _publish(self, call: Call, caller: _Caller, page_id: str):
        if page_id not in self.pages:
            return self._unsupported("POST", page_id)
        refused = self._page_caller_refusal(caller, page_id, {"pages_manage_posts", "pages_read_engagement"},
                                            "CREATE_CONTENT")
        if refused:
            return refused
        message, refused = self._message(call)
        if refused:
            return refused
        last = next((post for post in reversed(self.posts.values()) if post.page_id == page_id), None)
        if last is not None and last.message == message:
            return graph_error(400, 506, "(#506) Duplicate status message")
        post_id = f"{page_id}_{next(self._ids)}"
        self.posts[post_id] = FakePost(post_id, page_id, message)
        return 200, {}, {"id": post_id}

    def _comment(self, call: Call, caller: _Caller, post_id: str):
        post = self.posts.get(post_id)
        if post is None:
            return self._unsupported("POST", post_id)
        refused = self._page_caller_refusal(caller, post.page_id, {"pages_manage_engagement", "pages_read_engagement"},
                                            "MODERATE")
        if refused:
            return refused
        message, refused = self._message(call)
        if refused:
            return refused
        comment_id = f"{post_id.split('_')[1]}_{next(self._ids)}"
        self.comments[comment_id] = {"id": comment_id, "post": post_id, "message": message}
        post.comments.append(comment_id)
        return 200, {}, {"id": comment_id}

    def _can_read(self, caller: _Caller, page_id: str):
        if "pages_read_engagement" not in caller.scopes:
            return graph_error(403, 10, "(#10) This endpoint requires the 'pages_read_engagement' permission")
        page = self.pages[page_id]
        if caller.kind == "page" and caller.page_id != page_id or caller.kind == "user" and page.manager != caller.user_id:
            return self._unsupported("GET", page_id)
        return None

    def _read_post(self, call: Call, caller: _Caller, post: FakePost):
        refused = self._can_read(caller, post.page_id)
        if refused:
            return refused
        body: dict = {"id": post.id}
        for name, modifiers in _fields(call.query.get("fields", "message,created_time")):
            if name in ("reactions", "comments"):
                count = post.reactions if name == "reactions" else len(post.comments)
                edge: dict = {"data": []}
                if "summary(" in modifiers:
                    edge["summary"] = {"total_count": count}
                body[name] = edge
            elif name == "shares":
                if post.shares:
                    body["shares"] = {"count": post.shares}  # left out when nobody shared it
            elif name == "message":
                body["message"] = post.message
            elif name == "created_time":
                body["created_time"] = "2027-05-03T09:00:00+0000"
            else:
                return graph_error(400, 100, f"(#100) Tried accessing nonexisting field ({name}) on node type "
                                             "(PagePost)")
        return 200, {}, body

    def _insights(self, call: Call, caller: _Caller, post_id: str):
        post = self.posts.get(post_id)
        if post is None:
            return self._unsupported("GET", post_id)
        refused = self._can_read(caller, post.page_id)
        if refused:
            return refused
        if "read_insights" not in caller.scopes:
            return graph_error(403, 10, "(#10) This endpoint requires the 'read_insights' permission")
        metrics = [m for m in call.query.get("metric", "").split(",") if m]
        if not metrics:
            return graph_error(400, 3001, "No metric was specified to be fetched.", subcode=1504028)
        for metric in metrics:
            if metric in DEPRECATED_METRICS or metric not in VIEWS_METRICS:
                return graph_error(400, 100, "(#100) The value must be a valid insights metric")
        if not self.pages[post.page_id].insights:
            return 200, {}, {"data": []}
        return 200, {}, {"data": [
            {"name": metric, "period": "lifetime", "values": [{"value": post.views}], "title": "Lifetime Post Views",
             "id": f"{post.id}/insights/{metric}/lifetime"} for metric in metrics
        ]}

    def _read_page(self, call: Call, caller: _Caller, page: FakePage):
        refused = self._can_read(caller, page.id)
        if refused:
            return refused
        body: dict = {"id": page.id}
        for name, _ in _fields(call.query.get("fields", "name")):
            if name == "followers_count":
                body["followers_count"] = page.followers
            elif name == "name":
                body["name"] = page.name
            else:
                return graph_error(400, 100, f"(#100) Tried accessing nonexisting field ({name}) on node type (Page)")
        return 200, {}, body
