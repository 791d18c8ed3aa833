"""Facebook Pages: posts through the Graph API as a Page (the version is the API URL's,
SOCIALPUB_FACEBOOK_API_URL: `https://graph.facebook.com/v21.0`), accounts connected with
Facebook Login (authorization code; no PKCE; the client authenticates with form fields;
permissions asked comma-separated).

Connecting reads the pages the user manages (`GET /me/accounts`): one account per
page the user can post to (task CREATE_CONTENT), connected with the page's own token
(secrets: `access_token`, the page token; `user_access_token`, the user's). Facebook
issues no refresh token: when it refuses a token (Graph error 190), the account must
be connected again. A page token obtained from a short-lived user token (what the
code exchange answers: one to two hours) lasts as long; from a long-lived one (the
`fb_exchange_token` grant, which needs the app secret: `long_lived_token`) it does
not expire.

A post is `POST /{page-id}/feed` (`message`), its first comment `POST
/{post-id}/comments`, both with the page token. Metrics: the post's reactions,
comments and shares (`GET /{post-id}?fields=...`), its views from the insights
(`post_media_view`, which replaced `post_impressions` in November 2025; none when the
page has no insights), and the page's `followers_count`.

Graph errors are read from their body (`error.code`), not their HTTP status: 190 (and
102, 104) a refused token; 4, 17, 32, 613 and 80001 rate limits, waiting the
`estimated_time_to_regain_access` (minutes) of `X-Business-Use-Case-Usage` or
`X-Page-Usage`, else Retry-After; 1, 2 and `is_transient` transient; 10 and 200-299
a missing permission, 100 an invalid parameter, 506 a duplicate post: permanent.
Facebook takes no idempotency key: a call whose answer was lost may have posted,
which the pipeline's record-before-next-call rule bounds to the calls in flight."""
from __future__ import annotations

import datetime as dt
import json as jsonlib
from urllib.parse import quote, urlencode

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
from socialpub.connectors.oauth import OAuthClient, OAuthSpec, TokenSet
from socialpub.outbound import Response

PLATFORM = "Facebook"
WEB = "https://www.facebook.com"
# Pages read per /me/accounts call, and pages of them followed at most.
PAGE_SIZE = 100
MAX_PAGES = 10
# The task a user needs on a page to post as it.
CREATE_CONTENT = "CREATE_CONTENT"
POST_METRICS = "reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0),shares"
VIEWS_METRIC = "post_media_view"

AUTH_CODES = frozenset({102, 104, 190})
RATE_LIMIT_CODES = frozenset({4, 17, 32, 613, 80001})
TRANSIENT_CODES = frozenset({1, 2})
PERMISSION_CODES = frozenset({10, *range(200, 300)})
DUPLICATE_POST = 506
INVALID_PARAMETER = 100


def _object(value) -> dict:
    return value if isinstance(value, dict) else {}


def _summary_count(body: dict, edge: str) -> int:
    node = body.get(edge)
    return c.count(node.get("summary") if isinstance(node, dict) else None, "total_count")


def _minutes_to_regain(response: Response) -> float | None:
    """The wait Facebook gives a throttled caller, in seconds: the largest
    `estimated_time_to_regain_access` (minutes) of the Business Use Case usage header
    (`{"<id>": [{"type": "pages", ..., "estimated_time_to_regain_access": 19}]}`) or of
    the page usage header (one flat object). None when neither names a wait."""
    waits = []
    for name in ("X-Business-Use-Case-Usage", "X-Page-Usage"):
        raw = response.headers.get(name)
        if not raw:
            continue
        try:
            usage = jsonlib.loads(raw)
        except ValueError:
            continue
        entries = [usage] if isinstance(usage, dict) and "estimated_time_to_regain_access" in usage else [
            entry for value in (usage.values() if isinstance(usage, dict) else ())
            for entry in (value if isinstance(value, list) else []) if isinstance(entry, dict)
        ]
        for entry in entries:
            minutes = c.non_negative_number(entry.get("estimated_time_to_regain_access"))
            if minutes:
                waits.append(minutes * 60)
    return max(waits) if waits else None


def _web_url(post_id: str) -> str:
    """A page post's address: its id is `{page-id}_{post-id}`."""
    page_id, _, story = post_id.partition("_")
    if page_id and story:
        return f"{WEB}/{quote(page_id, safe='')}/posts/{quote(story, safe='')}"
    return f"{WEB}/{quote(post_id, safe='')}"


def _segment(value: str, what: str) -> str:
    """An id as one path segment: Graph ids are digits, joined by `_` for posts and comments."""
    text = str(value).strip()
    if not text or not all(part.isdigit() for part in text.split("_")):
        raise c.rejected(PLATFORM, f"{what} {text[:40]!r} is not a Facebook id")
    return text


class LongLivedUserToken:
    """How Facebook's tokens are kept (OAuthSpec.token_keeper): the code's short-lived
    user token (an hour or two) is exchanged at once for a long-lived one, whose page
    tokens (what the account publishes with) do not expire. There is no refresh token:
    a page token Facebook refuses later (a password change, the app removed) means the
    account is connected again."""

    def after_exchange(self, client: OAuthClient, guarded, tokens: TokenSet) -> TokenSet:
        return FacebookConnector(guarded).long_lived_token(client, tokens.access_token)

    def refresh(self, client: OAuthClient, guarded, *, refresh_token: str) -> TokenSet:
        raise c.auth_failed(PLATFORM, "Facebook tokens are not refreshed; connect the account again")


class FacebookConnector(OAuthHttpConnector):
    name = "facebook"
    supports_comments = True
    reports_metrics = True
    publishes_text = True
    oauth = OAuthSpec(
        platform="facebook", label=PLATFORM,
        # List the pages (and their tokens), post as them, comment as them, read their
        # posts' counts and followers, read post insights.
        scopes=("pages_show_list", "pages_manage_posts", "pages_read_engagement", "pages_manage_engagement",
                "read_insights"),
        pkce=False, token_auth="client_secret_post", scope_separator=",", token_keeper=LongLivedUserToken(),
    )

    token_label = "page access token"

    def validate_options(self, options: dict) -> None:
        page_id = c.require_text(options, "page_id", "page id")
        if not page_id.isdigit():
            raise ValueError("page id (page_id) must be the page's numeric id")

    # -- connecting -------------------------------------------------------------------

    @c.platform_errors_only
    def identities(self, *, api_url: str, access_token: str) -> list[Identity]:
        """One identity per page the user can post to, with the page's own token."""
        identities, after, seen = [], None, 0
        for _ in range(MAX_PAGES):
            params = {"fields": "id,name,access_token,tasks", "limit": str(PAGE_SIZE)}
            if after:
                params["after"] = after
            body = self.request("GET", api_url, f"/me/accounts?{urlencode(params)}", access_token, what="the request")
            pages = body.get("data")
            if not isinstance(pages, list):
                raise c.malformed(PLATFORM, "the list of pages")
            for page in pages:
                seen += 1
                identity = self._identity(page, access_token)
                if identity is not None:
                    identities.append(identity)
            paging = _object(body.get("paging"))
            cursors = _object(paging.get("cursors"))
            after = cursors.get("after")
            if not paging.get("next") or not isinstance(after, str) or not after:
                break
        if not identities:
            raise c.rejected(PLATFORM, (
                f"none of the {seen} pages granted can be posted to (the CREATE_CONTENT task)" if seen else
                "no page was granted: connect again and select the pages to publish to"
            ))
        return identities

    @staticmethod
    def _identity(page, user_token: str) -> Identity | None:
        if not isinstance(page, dict):
            return None
        page_id, name, token, tasks = page.get("id"), page.get("name"), page.get("access_token"), page.get("tasks")
        if not (isinstance(page_id, str) and page_id.isdigit() and isinstance(name, str) and name.strip()):
            return None
        # No token: the app may not act for this page; no CREATE_CONTENT: the user may not post.
        if not isinstance(token, str) or not token or not isinstance(tasks, list) or CREATE_CONTENT not in tasks:
            return None
        return Identity(external_id=page_id, handle=name.strip(), options={"page_id": page_id},
                        secrets={"access_token": token, "user_access_token": user_token})

    def long_lived_token(self, client: OAuthClient, access_token: str) -> TokenSet:
        """A long-lived user token (about 60 days) for a short-lived one, through the
        `fb_exchange_token` grant (it needs the app secret, so the caller gives the
        client). Page tokens read with it (`identities`) do not expire."""
        redact = c.Redactor(client.client_secret, access_token)
        query = urlencode({"grant_type": "fb_exchange_token", "client_id": client.client_id,
                           "client_secret": client.client_secret or "", "fb_exchange_token": access_token})
        url = f"{client.token_url}{'&' if '?' in client.token_url else '?'}{query}"
        response = c.send(self.client, "GET", url, platform=PLATFORM, redact=redact,
                          headers={"Accept": "application/json"})
        if not 200 <= response.status_code < 300:
            raise self._error(response, redact, what="the token exchange", token_endpoint=True)
        body = c.reply_object(response, PLATFORM)
        token, expires_in = body.get("access_token"), body.get("expires_in")
        if not isinstance(token, str) or not token:
            raise c.malformed(PLATFORM, "a long-lived access token")
        expires_at = None
        if isinstance(expires_in, int) and not isinstance(expires_in, bool) and expires_in > 0:
            expires_at = clock.now() + dt.timedelta(seconds=expires_in)
        return TokenSet(access_token=token, refresh_token=None, expires_at=expires_at)

    # -- publishing -------------------------------------------------------------------

    @c.platform_errors_only
    def publish(self, account: AccountCredentials, content: str, *, idempotency_key: str) -> Published:
        c.checked_account(self, account)
        page_id = account.options["page_id"].strip()
        body = self.request("POST", account.options["api_url"], f"/{page_id}/feed", account.secrets["access_token"],
                            json={"message": content}, account=account, what="the post")
        post_id = body.get("id")
        if not isinstance(post_id, str) or not post_id:
            raise c.malformed(PLATFORM, "a post id")
        return Published(external_id=post_id, url=_web_url(post_id))

    @c.platform_errors_only
    def comment(self, account: AccountCredentials, *, parent: Published, content: str, idempotency_key: str) -> Published:
        c.checked_account(self, account)
        post_id = _segment(parent.external_id, "the post id")
        body = self.request("POST", account.options["api_url"], f"/{post_id}/comments",
                            account.secrets["access_token"], json={"message": content}, account=account,
                            what="the comment")
        comment_id = body.get("id")
        if not isinstance(comment_id, str) or not comment_id:
            raise c.malformed(PLATFORM, "a comment id")
        # A comment's id is `{post-id}_{comment-id}`; it is shown on its post's page.
        return Published(external_id=comment_id,
                         url=f"{_web_url(post_id)}?comment_id={quote(comment_id.rpartition('_')[2], safe='')}")

    # -- metrics ----------------------------------------------------------------------

    @c.platform_errors_only
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> PostMetricsReading:
        c.checked_account(self, account)
        post_id = _segment(external_id, "the post id")
        api_url, token = account.options["api_url"], account.secrets["access_token"]
        body = self.request("GET", api_url, f"/{post_id}?{urlencode({'fields': POST_METRICS})}", token,
                            account=account, what="the post")
        if "reactions" not in body and "comments" not in body:
            raise c.malformed(PLATFORM, "the post's reactions and comments")
        return PostMetricsReading(
            likes=_summary_count(body, "reactions"), comments=_summary_count(body, "comments"),
            shares=c.count(body.get("shares"), "count"),
            impressions=self._views(api_url, post_id, token, account),
        )

    def _views(self, api_url: str, post_id: str, token: str, account: AccountCredentials) -> int | None:
        """The post's lifetime views; None where Facebook has none to give (a page
        without insights, a token without read_insights): the counts still stand."""
        try:
            body = self.request("GET", api_url, f"/{post_id}/insights?{urlencode({'metric': VIEWS_METRIC})}", token,
                                account=account, what="the post's insights")
        except PlatformError as exc:
            if exc.transient or exc.auth_failed:
                raise
            return None
        metrics = body.get("data")
        for metric in metrics if isinstance(metrics, list) else []:
            if isinstance(metric, dict) and metric.get("name") == VIEWS_METRIC:
                values = metric.get("values")
                if isinstance(values, list) and values and isinstance(values[-1], dict):
                    value = values[-1].get("value")
                    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                        return value
        return None

    @c.platform_errors_only
    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading:
        c.checked_account(self, account)
        page_id = account.options["page_id"].strip()
        body = self.request("GET", account.options["api_url"], f"/{page_id}?fields=followers_count",
                            account.secrets["access_token"], account=account, what="the page")
        followers = body.get("followers_count")
        if isinstance(followers, bool) or not isinstance(followers, int):
            raise c.malformed(PLATFORM, "the page's followers_count")
        return AccountMetricsReading(followers=max(0, followers))

    # -- the calls ----------------------------------------------------------------------

    def _error_in(self, body: dict, response: Response, redact: c.Redactor, what: str) -> PlatformError | None:
        return self._error(response, redact, what) if isinstance(body.get("error"), dict) else None

    @staticmethod
    def _error(response: Response, redact: c.Redactor, what: str, *, token_endpoint: bool = False) -> PlatformError:
        """What a Graph error answer means. At the token endpoint code 1 and 101 name
        the app's id or secret refused (permanent), not an unknown failure."""
        error = _object(_object(c.json_or_none(response)).get("error"))
        code, subcode = error.get("code"), error.get("error_subcode")
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        message = c.detail(error.get("error_user_msg") or error.get("message"), redact)
        if code is not None:
            message = c.with_detail(f"(code {code}{f', subcode {subcode}' if isinstance(subcode, int) else ''})",
                                    message)
        status = response.status_code
        if code in AUTH_CODES or (code is None and status == 401):
            return c.auth_failed(PLATFORM, c.with_detail("the access token was refused; connect the page again", message))
        if code in RATE_LIMIT_CODES or status == 429:
            return c.rate_limited_response(PLATFORM, response, message, platform_wait=_minutes_to_regain(response))
        if token_endpoint and code in (1, 101) and status < 500:
            return c.rejected(PLATFORM, c.with_detail(f"{what} refused the app's id or secret", message))
        if code in TRANSIENT_CODES or error.get("is_transient") is True or status >= 500:
            return c.unavailable(PLATFORM, status, message)
        if code in PERMISSION_CODES:
            return c.rejected(PLATFORM, c.with_detail(
                f"{what} was refused: a permission or page task is missing", message))
        if code == DUPLICATE_POST:
            return c.rejected(PLATFORM, c.with_detail(f"{what} was refused as a duplicate of the page's last post",
                                                      message))
        if code == INVALID_PARAMETER:
            return c.rejected(PLATFORM, c.with_detail(f"{what} was refused", message))
        return c.error_for_status(PLATFORM, response, message, refused=what)
