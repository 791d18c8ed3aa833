"""X (Twitter): posts through the X API v2 (`POST /2/tweets`), accounts connected with
OAuth 2 (authorization code with PKCE; `offline.access` for a refresh token; access
tokens last two hours).

A post's first comment is a reply (`reply.in_reply_to_tweet_id`); metrics come from the
post's `public_metrics` and the user's. X takes no idempotency key: a call whose answer
was lost may have posted, which the pipeline's record-before-next-call rule bounds to
the calls in flight. X's own limits (100 posts per 15 minutes per user) answer 429 with
`x-rate-limit-reset` (epoch seconds), which is honoured."""
from __future__ import annotations

from urllib.parse import quote

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

PLATFORM = "X"


class TwitterConnector(OAuthHttpConnector):
    name = "twitter"
    supports_comments = True
    reports_metrics = True
    publishes_text = True
    oauth = OAuthSpec(
        platform="twitter", label=PLATFORM, scopes=("tweet.read", "tweet.write", "users.read", "offline.access"),
        pkce=True, token_auth="client_secret_basic",
    )

    # -- connecting -------------------------------------------------------------------

    @c.platform_errors_only
    def identities(self, *, api_url: str, access_token: str) -> list[Identity]:
        user = self.request("GET", api_url, "/2/users/me", access_token, what="the user")
        data = user.get("data") if isinstance(user.get("data"), dict) else {}
        user_id, username = data.get("id"), data.get("username")
        if not isinstance(user_id, str) or not user_id or not isinstance(username, str) or not username:
            raise c.malformed(PLATFORM, "the user's id and username")
        return [Identity(external_id=user_id, handle=f"@{username}", options={"user_id": user_id})]

    # -- publishing -------------------------------------------------------------------

    @c.platform_errors_only
    def publish(self, account: AccountCredentials, content: str, *, idempotency_key: str) -> Published:
        return self._tweet(account, {"text": content})

    @c.platform_errors_only
    def comment(self, account: AccountCredentials, *, parent: Published, content: str, idempotency_key: str) -> Published:
        return self._tweet(account, {"text": content, "reply": {"in_reply_to_tweet_id": str(parent.external_id)}})

    def _tweet(self, account: AccountCredentials, payload: dict) -> Published:
        c.checked_account(self, account)
        body = self.request("POST", account.options["api_url"], "/2/tweets", account.secrets["access_token"],
                            json=payload, account=account, what="the post")
        data = body.get("data") if isinstance(body.get("data"), dict) else {}
        tweet_id = data.get("id")
        if not isinstance(tweet_id, str) or not tweet_id:
            raise c.malformed(PLATFORM, "a post id")
        handle = account.handle.lstrip("@") or "i"
        return Published(external_id=tweet_id, url=f"https://x.com/{quote(handle)}/status/{quote(tweet_id)}")

    # -- metrics ----------------------------------------------------------------------

    @c.platform_errors_only
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> PostMetricsReading:
        c.checked_account(self, account)
        body = self.request("GET", account.options["api_url"],
                            f"/2/tweets/{quote(str(external_id), safe='')}?tweet.fields=public_metrics",
                            account.secrets["access_token"], account=account, what="the post")
        metrics = (body.get("data") or {}).get("public_metrics") if isinstance(body.get("data"), dict) else None
        if not isinstance(metrics, dict):
            raise c.malformed(PLATFORM, "the post's public_metrics")
        return PostMetricsReading(
            likes=c.count(metrics, "like_count"), comments=c.count(metrics, "reply_count"),
            shares=c.count(metrics, "retweet_count") + c.count(metrics, "quote_count"),
            impressions=c.count(metrics, "impression_count") if "impression_count" in metrics else None,
        )

    @c.platform_errors_only
    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading:
        c.checked_account(self, account)
        body = self.request("GET", account.options["api_url"], "/2/users/me?user.fields=public_metrics",
                            account.secrets["access_token"], account=account, what="the user")
        metrics = (body.get("data") or {}).get("public_metrics") if isinstance(body.get("data"), dict) else None
        if not isinstance(metrics, dict):
            raise c.malformed(PLATFORM, "the user's public_metrics")
        return AccountMetricsReading(followers=c.count(metrics, "followers_count"))

    # -- the calls ----------------------------------------------------------------------

    @staticmethod
    def _error_in(body: dict, response: Response, redact: c.Redactor, what: str) -> PlatformError | None:
        if isinstance(body.get("errors"), list) and "data" not in body:
            # X answers 200 with only `errors` for a post it cannot find.
            return c.rejected(PLATFORM, c.with_detail(f"{what} was refused", c.detail(body["errors"][0], redact)))
        return None

    @staticmethod
    def _error(response: Response, redact: c.Redactor, what: str) -> PlatformError:
        """X's refusals name no call: its messages say what was refused."""
        status = response.status_code
        body = c.json_or_none(response)
        message = ""
        if isinstance(body, dict):
            errors = body.get("errors")
            first = errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], dict) else {}
            message = c.detail(body.get("detail") or body.get("title") or first.get("message"), redact)
        if status == 401:
            return c.auth_failed(PLATFORM, c.with_detail("the access token was refused", message))
        if status == 403:
            # Forbidden: a duplicate post, a suspended account, an app without write access.
            return c.rejected(PLATFORM, c.with_detail("the post was refused (403)", message))
        return c.error_for_status(
            PLATFORM, response, message, platform_wait=c.seconds_until_epoch(response.headers.get("x-rate-limit-reset")),
        )
