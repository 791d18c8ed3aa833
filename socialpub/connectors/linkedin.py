"""LinkedIn: posts as the member through the Posts API (`POST /rest/posts`), accounts
connected with OAuth 2 (authorization code; LinkedIn offers standard apps no PKCE and
takes the client's credentials as form fields; access tokens last 60 days, refresh
tokens a year where LinkedIn grants them to the app).

Every `/rest/` call names the API version it was written for (`LinkedIn-Version`,
`API_VERSION`: LinkedIn keeps a version for about a year, then answers 426) and the
Rest.li protocol (`X-Restli-Protocol-Version: 2.0.0`); URNs in a path are URL-encoded.

The member is read from OpenID Connect's `GET /v2/userinfo` (`sub`, `name`): its
author URN is `urn:li:person:{sub}`. A post's `commentary` is LinkedIn's "little"
text, where `\\ | { } @ [ ] ( ) < > # * _ ~` are markup: LinkedIn drops everything
from the first one left unescaped, so each is escaped here, except the `#` of a
hashtag (`#word`, which LinkedIn links). The post's URN comes back in the
`x-restli-id` header. The first comment goes through the comments API
(`POST /rest/socialActions/{post urn}/comments`), whose text is plain.

LinkedIn takes no idempotency key, but refuses a post whose text repeats a recent one
of the same author, naming it (422 "Content is a duplicate of urn:li:share:..."): a
publish retried after its answer was lost finds its own post that way, and takes it
as the receipt.

Metrics: likes and comments from `GET /rest/socialActions/{urn}` (no impressions or
reshares for a member's post), followers from `GET /rest/memberFollowersCount?q=me`.
Both need permissions LinkedIn grants only to approved apps (`r_member_social`,
`r_member_profileAnalytics`), which are not asked for by default (asking for a scope
the app lacks makes LinkedIn refuse the whole authorization): an approved app names
them in `SOCIALPUB_LINKEDIN_EXTRA_SCOPES`. Without them LinkedIn answers 403, read as
"no metrics" (None).

Errors come as `{status, serviceErrorCode, code, message}`: 401 is a refused token
(65600 invalid, 65601 revoked, 65602 expired); LinkedIn's limits are per day and
reset at midnight UTC, and its 429 has no Retry-After, so a rate limit waits until
then (or the Retry-After, should one come)."""
from __future__ import annotations

import datetime as dt
import re
from urllib.parse import quote

from socialpub import clock
from socialpub.connectors import _common as c
from socialpub.connectors._oauth_http import OAuthHttpConnector
from socialpub.connectors.base import (
    AccountCredentials,
    AccountMetricsReading,
    Identity,
    PlatformError,
    PostMetricsReading,
    Published,
)
from socialpub.connectors.oauth import OAuthSpec
from socialpub.outbound import Response

PLATFORM = "LinkedIn"
# The API version every /rest/ call is written for (YYYYMM); move it on before
# LinkedIn sunsets it (about a year after its release).
API_VERSION = "202609"
RESTLI_PROTOCOL = "2.0.0"
# The permissions the metrics calls need: LinkedIn grants them to approved apps only.
POST_METRICS_SCOPE = "r_member_social"
FOLLOWERS_SCOPE = "r_member_profileAnalytics"

# LinkedIn's "little" text format: these are markup, and must be escaped to be text.
RESERVED = frozenset("\\|{}@[]()<>#*_~")
# A hashtag (HashtagElement: '#' and a single word), left for LinkedIn to link.
_HASHTAG = re.compile(r"#[^\W_]+")
_PERSON_URN = re.compile(r"^urn:li:person:[A-Za-z0-9_-]+$")
_POST_URN = re.compile(r"^urn:li:(?:share|ugcPost):\d+$")
_DUPLICATE = re.compile(r"duplicate of (urn:li:(?:share|ugcPost):\d+)", re.IGNORECASE)


def little_text(text: str) -> str:
    """Plain text as LinkedIn's little format shows it as written: every reserved
    character escaped with a backslash, except the `#` opening a hashtag."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "#":
            hashtag = _HASHTAG.match(text, index)
            previous = text[index - 1] if index else ""
            if hashtag and not (previous.isalnum() or previous == "_"):
                out.append(hashtag.group())
                index = hashtag.end()
                continue
        out.append("\\" + char if char in RESERVED else char)
        index += 1
    return "".join(out)


def post_url(urn: str) -> str:
    return f"https://www.linkedin.com/feed/update/{urn}/"


def _object(value) -> dict:
    return value if isinstance(value, dict) else {}


def seconds_until_midnight_utc(now: dt.datetime | None = None) -> float:
    """When LinkedIn's daily limits reset."""
    now = (now or clock.now()).astimezone(dt.UTC)
    midnight = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
    return max(1.0, (midnight - now).total_seconds())


class LinkedInConnector(OAuthHttpConnector):
    name = "linkedin"
    supports_comments = True
    reports_metrics = True
    publishes_text = True
    oauth = OAuthSpec(
        platform="linkedin", label=PLATFORM, scopes=("openid", "profile", "w_member_social"),
        pkce=False, token_auth="client_secret_post",
    )

    def validate_options(self, options: dict) -> None:
        author = c.require_text(options, "author_urn", "author URN")
        if not _PERSON_URN.match(author):
            raise ValueError("author URN (author_urn) must be a member URN (urn:li:person:...)")

    # -- connecting -------------------------------------------------------------------

    @c.platform_errors_only
    def identities(self, *, api_url: str, access_token: str) -> list[Identity]:
        response = self._call("GET", api_url, "/v2/userinfo", access_token, versioned=False, what="the member")
        member = c.reply_object(response, PLATFORM, response.url)
        sub = member.get("sub")
        if not isinstance(sub, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", sub):
            raise c.malformed(PLATFORM, "the member's id (sub)")
        name = member.get("name")
        if not isinstance(name, str) or not name.strip():
            parts = [member.get(key) for key in ("given_name", "family_name")]
            name = " ".join(part.strip() for part in parts if isinstance(part, str) and part.strip()) or sub
        return [Identity(external_id=sub, handle=" ".join(name.split()), options={"author_urn": f"urn:li:person:{sub}"})]

    # -- publishing -------------------------------------------------------------------

    @c.platform_errors_only
    def publish(self, account: AccountCredentials, content: str, *, idempotency_key: str) -> Published:
        c.checked_account(self, account)
        payload = {
            "author": account.options["author_urn"],
            "commentary": little_text(content),
            "visibility": "PUBLIC",
            "distribution": {"feedDistribution": "MAIN_FEED", "targetEntities": [], "thirdPartyDistributionChannels": []},
            "lifecycleState": "PUBLISHED",
            "isReshareDisabledByAuthor": False,
        }
        response = self._call("POST", account.options["api_url"], "/rest/posts", account.secrets["access_token"],
                              json=payload, account=account, what="the post", duplicate_is_receipt=True)
        if isinstance(response, Published):
            return response
        urn = (response.headers.get("x-restli-id") or "").strip()
        if not _POST_URN.match(urn):
            raise c.malformed(PLATFORM, "the post's URN (x-restli-id)", response, response.url)
        return Published(external_id=urn, url=post_url(urn), reference={"urn": urn})

    @c.platform_errors_only
    def comment(self, account: AccountCredentials, *, parent: Published, content: str, idempotency_key: str) -> Published:
        c.checked_account(self, account)
        post = str(parent.external_id)
        if not _POST_URN.match(post):
            raise c.rejected(PLATFORM, "the post to comment under is not a LinkedIn post URN")
        payload = {"actor": account.options["author_urn"], "object": post, "message": {"text": content}}
        response = self._call("POST", account.options["api_url"], f"/rest/socialActions/{quote(post, safe='')}/comments",
                              account.secrets["access_token"], json=payload, account=account, what="the comment")
        body = c.json_or_none(response)
        body = body if isinstance(body, dict) else {}
        urn = body.get("commentUrn") or body.get("$URN")
        if not (isinstance(urn, str) and urn.startswith("urn:li:comment:")):
            comment_id = body.get("id") or (response.headers.get("x-restli-id") or "").strip()
            if not isinstance(comment_id, (str, int)) or isinstance(comment_id, bool) or not str(comment_id):
                raise c.malformed(PLATFORM, "the comment's id", response, response.url)
            urn = comment_id if str(comment_id).startswith("urn:li:comment:") else f"urn:li:comment:({post},{comment_id})"
        return Published(external_id=urn, url=f"{post_url(post)}?commentUrn={quote(urn, safe='')}", reference={"urn": urn})

    # -- metrics ----------------------------------------------------------------------

    @c.platform_errors_only
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None
                           ) -> PostMetricsReading | None:
        c.checked_account(self, account)
        response = self._call("GET", account.options["api_url"], f"/rest/socialActions/{quote(str(external_id), safe='')}",
                              account.secrets["access_token"], account=account, what="the post's social actions",
                              forbidden_is_none=True)
        if response is None:
            return None  # the app lacks r_member_social: LinkedIn reports nothing to it
        body = c.reply_object(response, PLATFORM, response.url)
        likes, comments = body.get("likesSummary"), body.get("commentsSummary")
        if not isinstance(likes, dict) or not isinstance(comments, dict):
            raise c.malformed(PLATFORM, "the post's likesSummary and commentsSummary")
        return PostMetricsReading(likes=c.count(likes, "totalLikes"), comments=c.count(comments, "aggregatedTotalComments"),
                                  shares=0)

    @c.platform_errors_only
    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading | None:
        c.checked_account(self, account)
        response = self._call("GET", account.options["api_url"], "/rest/memberFollowersCount?q=me",
                              account.secrets["access_token"], account=account, what="the member's followers",
                              forbidden_is_none=True)
        if response is None:
            return None  # the app lacks r_member_profileAnalytics
        body = c.reply_object(response, PLATFORM, response.url)
        elements = body.get("elements")
        first = elements[0] if isinstance(elements, list) and elements and isinstance(elements[0], dict) else None
        count = first.get("memberFollowersCount") if first is not None else None
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise c.malformed(PLATFORM, "the member's follower count")
        return AccountMetricsReading(followers=count)

    # -- the calls ----------------------------------------------------------------------

    def _call(self, method: str, api_url: str, path: str, token: str, *, json=None,
              account: AccountCredentials | None = None, what: str, versioned: bool = True,
              duplicate_is_receipt: bool = False, forbidden_is_none: bool = False):
        headers = {"LinkedIn-Version": API_VERSION, "X-Restli-Protocol-Version": RESTLI_PROTOCOL} if versioned else None
        response, redact, _ = self.call(method, api_url, path, token, account=account, json=json, headers=headers)
        if 200 <= response.status_code < 300:
            return response
        if forbidden_is_none and response.status_code == 403:
            return None
        if duplicate_is_receipt and response.status_code == 422:
            same = _DUPLICATE.search(str(_object(c.json_or_none(response)).get("message") or ""))
            if same:
                urn = same.group(1)
                return Published(external_id=urn, url=post_url(urn), reference={"urn": urn})
        raise self._error(response, redact, what)

    @staticmethod
    def _error(response: Response, redact: c.Redactor, what: str) -> PlatformError:
        status = response.status_code
        body = _object(c.json_or_none(response))
        code = body.get("code") if isinstance(body.get("code"), str) else None
        message = c.detail(body.get("message"), redact)
        said = " ".join(part for part in (f"({code})" if code else "", message) if part)
        if status == 401:
            return c.auth_failed(PLATFORM, c.with_detail("the access token was refused", said))
        if status == 403:
            # ACCESS_DENIED: the token lacks the permission (w_member_social), or the
            # author is not the token's member. Connecting again grants it afresh.
            return c.rejected(PLATFORM, c.with_detail(
                f"{what} was refused (403): the token lacks the permission for it", said))
        if status == 426:
            return c.rejected(PLATFORM, c.with_detail(
                f"{what} was refused (426): API version {API_VERSION} is no longer served", said))
        wait = None
        if status == 429:
            wait = c.retry_after_header(response.headers.get("Retry-After"))
            if wait is None:
                wait = seconds_until_midnight_utc()
        return c.error_for_status(PLATFORM, response, said, platform_wait=wait, refused=what)
