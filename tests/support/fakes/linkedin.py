"""A fake LinkedIn: OAuth 2 without PKCE, the client's credentials as form fields
(tests.support.fakes.oauth), and the member calls the connector makes, checking what
LinkedIn checks (from its public documentation):

- OAuth: an authorization asking for a scope the app is not approved for is refused
  (`unauthorized_scope_error`); the token answer is LinkedIn's (a comma-separated
  `scope`, `refresh_token_expires_in`, an `id_token` for `openid`); a refresh answers
  the same refresh token, its lifetime not renewed.
- Tokens: 401 `{status, serviceErrorCode, message}` for a missing token, and with
  `code` for an invalid (65600), revoked (65601) or expired (65602) one; 403 ACCESS_DENIED for a
  call its scopes do not allow (`userinfo` needs openid and profile, posts and
  comments w_member_social, social actions r_member_social, followers
  r_member_profileAnalytics).
- `/rest/` calls: a `LinkedIn-Version` (400 without; 426 for one not served, LinkedIn
  serving each for a year) and `X-Restli-Protocol-Version: 2.0.0`; URNs in a path
  URL-encoded.
- Posts (`POST /rest/posts`): the required fields and their values, no unknown field,
  the author being the token's member, 3,000 characters of commentary, no duplicate
  of the author's earlier text (422 naming it), 150 posts a member a day (429 without
  Retry-After), and the "little" text format: an escaped reserved character is text,
  a hashtag, a mention or a hashtag template is markup, and at the first reserved
  character left unescaped the rest of the text is dropped, as LinkedIn does. The
  post's URN is answered in `x-restli-id` (201, no body).
- Comments: on a post that exists, as the token's member, with `object` the post."""
from __future__ import annotations

import datetime as dt
import itertools
import re
import secrets as random
import time
from urllib.parse import unquote

from tests.support.fakes.oauth import AUTHORIZE_PATH, FakeOAuthPlatform, FakeUser
from tests.support.platform_servers import Call, bearer

POST_LIMIT = 3000
POSTS_PER_DAY = 150
ACTIVE_MONTHS = 12  # LinkedIn serves each API version for a year
RESERVED = set("\\|{}@[]()<>#*_~")
_HASHTAG = re.compile(r"#[^\W_]+")
_HASHTAG_TEMPLATE = re.compile(r"\{hashtag\|\\?[#\uff03]\|([^{}|\\]+)\}")
_MENTION = re.compile(r"@\[([^\[\]\\]*)\]\((urn:li:(?:person|organization):[A-Za-z0-9_-]+)\)")
POST_FIELDS = {"author", "commentary", "visibility", "distribution", "lifecycleState", "isReshareDisabledByAuthor",
               "content", "contentLandingPage", "contentCallToActionLabel", "container", "reshareContext", "adContext"}
REQUIRED_POST_FIELDS = ("author", "visibility", "distribution", "lifecycleState")


def render_little(commentary: str) -> str:
    """What LinkedIn shows of a little-format commentary: escapes undone, mentions
    as their names, hashtags as written, and nothing from the first reserved
    character left unescaped on."""
    out: list[str] = []
    index = 0
    while index < len(commentary):
        char = commentary[index]
        if char == "\\" and index + 1 < len(commentary) and commentary[index + 1] in RESERVED:
            out.append(commentary[index + 1])
            index += 2
            continue
        markup = None
        if char == "#":
            markup = _HASHTAG.match(commentary, index)
            shown = markup.group() if markup else ""
        elif char == "@":
            markup = _MENTION.match(commentary, index)
            shown = markup.group(1) if markup else ""
        elif char == "{":
            markup = _HASHTAG_TEMPLATE.match(commentary, index)
            shown = f"#{markup.group(1)}" if markup else ""
        if markup is not None:
            out.append(shown)
            index = markup.end()
            continue
        if char in RESERVED:
            break  # unescaped: LinkedIn drops the rest
        out.append(char)
        index += 1
    return "".join(out)


def _error(status: int, code: str, message: str, service_code: int | None = None):
    body = {"status": status, "code": code, "message": message}
    if service_code is not None:
        body["serviceErrorCode"] = service_code
    return status, {}, body


def _invalid(field: str, problem: str, status: int = 422):
    return status, {}, {
        "errorDetailType": "com.linkedin.common.error.BadRequest", "status": status,
        "message": f"ERROR :: /{field} :: {problem}",
        "errorDetails": {"inputErrors": [{"description": problem, "input": {"inputPath": {"fieldPath": f"/{field}"}},
                                          "code": "INVALID_VALUE"}]},
    }


class FakeLinkedIn(FakeOAuthPlatform):
    label = "LinkedIn"
    expected_handle = "Ada Lovelace"
    required_scopes = frozenset({"openid", "profile", "w_member_social"})
    # What the app is approved for: LinkedIn refuses an authorization asking for more.
    app_scopes = frozenset({"openid", "profile", "email", "w_member_social"})
    pkce_required = False
    client_auth = "client_secret_post"
    access_lifetime = 60 * 24 * 3600
    refresh_lifetime = 365 * 24 * 3600
    rotates_refresh_tokens = False

    def __init__(self, *users: FakeUser):
        super().__init__(*(users or (FakeUser("782bbtaQ", "Ada Lovelace", {
            "given_name": "Ada", "family_name": "Lovelace", "followers": 1500}),)))
        self.posts: dict[str, dict] = {}  # urn -> the post
        self.comments: list[dict] = []
        self.posts_per_day = POSTS_PER_DAY
        self._ids = itertools.count(7_200_000_000_000_000_001)
        self._refresh_born: dict[str, float] = {}

    # -- what the tests read ---------------------------------------------------------

    def published_texts(self) -> list[str]:
        with self.lock:
            return [post["text"] for post in self.posts.values()]

    def reply_texts(self) -> list[str]:
        with self.lock:
            return [comment["message"]["text"] for comment in self.comments]

    def follower_count(self) -> int:
        return next(iter(self.users.values())).extra.get("followers", 0)

    def error_body(self, status: int):
        if status == 429:
            return {"status": 429, "serviceErrorCode": 101, "code": "TOO_MANY_REQUESTS",
                    "message": "Resource level throttle MEMBER DAY limit for calls to this resource is reached."}
        if status >= 500:
            return {"status": status, "code": "INTERNAL_SERVER_ERROR", "message": "Internal Server Error"}
        return {"status": status, "message": f"status {status}"}

    # -- OAuth as LinkedIn answers it ---------------------------------------------------

    def route(self, call: Call):
        if call.path == AUTHORIZE_PATH:
            asked = set(filter(None, call.query.get("scope", "").split(self.scope_separator)))
            unapproved = sorted(asked - self.app_scopes)
            if unapproved and call.query.get("redirect_uri") and call.query.get("state"):
                return self._redirect(call.query["redirect_uri"], error="unauthorized_scope_error",
                                      error_description=f'Scope "{unapproved[0]}" is not authorized for your application',
                                      state=call.query["state"])
        return super().route(call)

    def token_answer(self, access: str, refresh: str | None, scopes: set) -> dict:
        answer = {"access_token": access, "expires_in": self.access_lifetime, "token_type": "Bearer",
                  "scope": ",".join(sorted(scopes))}
        if refresh:
            born = self._refresh_born.setdefault(refresh, time.time())
            answer["refresh_token"] = refresh
            answer["refresh_token_expires_in"] = max(0, int(self.refresh_lifetime - (time.time() - born)))
        if "openid" in scopes:
            answer["id_token"] = f"eyJhbGciOiJSUzI1NiJ9.{random.token_urlsafe(24)}.{random.token_urlsafe(16)}"
        return answer

    def _refresh(self, form: dict):
        status, headers, body = super()._refresh(form)
        if status == 200:
            # LinkedIn answers the same refresh token, its lifetime running on.
            token = form["refresh_token"]
            body["refresh_token"] = token
            body["refresh_token_expires_in"] = max(
                0, int(self.refresh_lifetime - (time.time() - self._refresh_born.setdefault(token, time.time()))))
        return status, headers, body

    # -- the API ------------------------------------------------------------------------

    def route_api(self, call: Call, path: str):
        token = bearer(call)
        if token is None:
            return 401, {}, {"status": 401, "serviceErrorCode": 401, "message": "Empty oauth2_access_token"}
        if token in self.access_tokens and self.revoked:
            return _error(401, "REVOKED_ACCESS_TOKEN", "The token used in the request has been revoked by the user", 65601)
        if token in self.expired:
            return _error(401, "EXPIRED_ACCESS_TOKEN", "The token used in the request has expired", 65602)
        user = self.user_of(call)
        if user is None:
            return _error(401, "INVALID_ACCESS_TOKEN", "Invalid access token", 65600)
        scopes = self.scopes_of(call)
        if path == "/v2/userinfo" and call.method == "GET":
            if not {"openid", "profile"} <= scopes:
                return _error(403, "ACCESS_DENIED", "Not enough permissions to access: userinfo.GET.NO_VERSION", 100)
            return 200, {}, {"sub": user.id, "name": user.handle, "given_name": user.extra.get("given_name"),
                             "family_name": user.extra.get("family_name"), "locale": {"country": "US", "language": "en"},
                             "picture": f"https://media.licdn.com/dms/image/{user.id}/profile.jpg"}
        if not path.startswith("/rest/"):
            return _error(404, "RESOURCE_NOT_FOUND", "No virtual resource found")
        problem = self._versioned(call)
        if problem:
            return problem
        if call.method == "POST" and path == "/rest/posts":
            return self._create_post(call, user, scopes)
        match = re.fullmatch(r"/rest/socialActions/([^/]+)(/comments)?", path)
        if match:
            if ":" in match.group(1):
                return _error(400, "ILLEGAL_ARGUMENT", "Syntax exception in path variables")
            urn = unquote(match.group(1))
            if call.method == "POST" and match.group(2):
                return self._comment(call, user, scopes, urn)
            if call.method == "GET" and not match.group(2):
                return self._social_actions(scopes, urn)
        if call.method == "GET" and path == "/rest/memberFollowersCount":
            if "r_member_profileAnalytics" not in scopes:
                return _error(403, "ACCESS_DENIED", "Not enough permissions to access: memberFollowersCount.FINDER-me", 100)
            if call.query.get("q") != "me":
                return _error(400, "ILLEGAL_ARGUMENT", "Invalid query parameters passed to request")
            return 200, {}, {"elements": [{"memberFollowersCount": user.extra.get("followers", 0)}],
                             "paging": {"count": 10, "start": 0, "links": []}}
        return _error(404, "RESOURCE_NOT_FOUND", "No virtual resource found")

    @staticmethod
    def _versioned(call: Call):
        version = call.headers.get("linkedin-version")
        if not version:
            return _error(400, "VERSION_MISSING",
                          "A version must be present. Please specify a version by adding the LinkedIn-Version header.")
        now = dt.datetime.now(dt.UTC)
        match = re.fullmatch(r"(\d{4})(0[1-9]|1[0-2])", version)
        age = (now.year * 12 + now.month) - (int(match.group(1)) * 12 + int(match.group(2))) if match else -1
        if not 0 <= age <= ACTIVE_MONTHS:
            return _error(426, "NONEXISTENT_VERSION", f"Requested version {version} is not active")
        if call.headers.get("x-restli-protocol-version") != "2.0.0":
            return _error(400, "ILLEGAL_ARGUMENT", "X-Restli-Protocol-Version 2.0.0 is required for this resource")
        return None

    def _create_post(self, call: Call, user: FakeUser, scopes: set):
        if "w_member_social" not in scopes:
            return _error(403, "ACCESS_DENIED",
                          f"Not enough permissions to access: partnerApiPostsExternal.CREATE.{call.headers['linkedin-version']}", 100)
        body = call.body
        if not isinstance(body, dict):
            return _error(400, "ILLEGAL_ARGUMENT", "Request body must be a JSON object")
        unknown = sorted(set(body) - POST_FIELDS)
        if unknown:
            return _invalid(unknown[0], "unrecognized field found but not allowed")
        for field in REQUIRED_POST_FIELDS:
            if field not in body:
                return _invalid(field, "field is required but not found and has no default value")
        if body["author"] != f"urn:li:person:{user.id}":
            return _error(403, "ACCESS_DENIED", "Not enough permissions to access: partnerApiPostsExternal.CREATE "
                                                "for the author", 100)
        if body["visibility"] not in ("PUBLIC", "CONNECTIONS", "LOGGED_IN", "CONTAINER"):
            return _invalid("visibility", f"{body['visibility']!r} is not a valid enum symbol")
        if body["lifecycleState"] not in ("PUBLISHED", "DRAFT"):
            return _invalid("lifecycleState", f"{body['lifecycleState']!r} is not a valid enum symbol")
        distribution = body["distribution"]
        if (not isinstance(distribution, dict) or distribution.get("feedDistribution") not in ("MAIN_FEED", "NONE")
                or not isinstance(distribution.get("targetEntities", []), list)
                or not isinstance(distribution.get("thirdPartyDistributionChannels", []), list)):
            return _invalid("distribution", "feedDistribution must be MAIN_FEED or NONE")
        if not isinstance(body.get("isReshareDisabledByAuthor", False), bool):
            return _invalid("isReshareDisabledByAuthor", "must be a boolean")
        commentary = body.get("commentary")
        if "content" not in body and (not isinstance(commentary, str) or not commentary.strip()):
            return _invalid("commentary", "a post without content needs commentary")
        text = render_little(commentary or "")
        if len(text) > POST_LIMIT:
            return _invalid("commentary", f"length {len(text)} exceeds the maximum of {POST_LIMIT} characters")
        for post in self.posts.values():
            if post["author"] == body["author"] and post["text"] == text:
                return _error(422, "DUPLICATE_POST", f"Content is a duplicate of {post['urn']}")
        today = dt.datetime.now(dt.UTC).date()
        if sum(1 for post in self.posts.values() if post["author"] == body["author"] and post["day"] == today) \
                >= self.posts_per_day:
            return 429, {}, self.error_body(429)  # a daily limit: no Retry-After
        urn = f"urn:li:share:{next(self._ids)}"
        self.posts[urn] = {"urn": urn, "author": body["author"], "commentary": commentary, "text": text, "day": today,
                           "likes": 12, "other_comments": 3}
        return 201, {"x-restli-id": urn, "x-linkedin-id": urn}, b""

    def _comment(self, call: Call, user: FakeUser, scopes: set, urn: str):
        if "w_member_social" not in scopes:
            return _error(403, "ACCESS_DENIED", "Not enough permissions to access: comments.CREATE", 100)
        body = call.body
        if not isinstance(body, dict):
            return _error(400, "ILLEGAL_ARGUMENT", "Request body must be a JSON object")
        if body.get("actor") != f"urn:li:person:{user.id}":
            return _error(403, "ACCESS_DENIED", "Not enough permissions to comment as this actor", 100)
        if body.get("object") != urn:
            return _invalid("object", "must be the entity the comment is created on", status=400)
        message = body.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("text"), str) or not message["text"].strip():
            return _invalid("message/text", "field is required but not found and has no default value")
        if urn not in self.posts:
            return _error(404, "RESOURCE_NOT_FOUND", f"{urn} does not exist")
        comment_id = str(next(self._ids))
        comment = {"actor": body["actor"], "agent": body["actor"], "object": urn, "id": comment_id,
                   "commentUrn": f"urn:li:comment:({urn},{comment_id})", "message": {"text": message["text"]},
                   "created": {"actor": body["actor"], "time": int(time.time() * 1000)}}
        self.comments.append(comment)
        return 201, {"x-restli-id": comment_id}, comment

    def _social_actions(self, scopes: set, urn: str):
        if "r_member_social" not in scopes:
            return _error(403, "ACCESS_DENIED", "Not enough permissions to access: socialActions.GET", 100)
        post = self.posts.get(urn)
        if post is None:
            return _error(404, "RESOURCE_NOT_FOUND", f"{urn} does not exist")
        comments = post["other_comments"] + sum(1 for comment in self.comments if comment["object"] == urn)
        return 200, {}, {
            "target": urn,
            "likesSummary": {"totalLikes": post["likes"], "aggregatedTotalLikes": post["likes"],
                             "likedByCurrentUser": False, "selectedLikes": []},
            "commentsSummary": {"totalFirstLevelComments": comments, "aggregatedTotalComments": comments,
                                "selectedComments": []},
        }
