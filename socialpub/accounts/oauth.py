"""Connecting accounts through OAuth 2, and keeping their tokens fresh.

Connecting (live mode: test mode has the sandbox):

1. `start_authorization` records a pending authorization (a random `state`, single
   use, expiring in 10 minutes; the PKCE verifier, encrypted) bound to who asked for
   it (a member's dashboard session, or the CLI), and answers the platform's
   authorization URL.
2. The platform sends the user back to `SOCIALPUB_OAUTH_REDIRECT_URL` with a code.
   `complete_authorization` takes the callback URL: the state must be a pending one of
   this workspace, platform and asker; it is used up at once. The code is exchanged
   for tokens, and the platform says what they publish as (`identities`): one
   identity is connected at once; several (a user's Facebook pages) wait, encrypted,
   for `choose_identity`.
3. An account is found again by the platform's id of what it publishes as: connecting
   it again updates its tokens, and never drops a refresh token the platform did not
   send again.

Refreshing: an account with a refresh token is due `oauth_refresh_margin_seconds`
before its access token expires, and at once when a platform refuses its token
(`service.token_refused`). `refresh_due_tokens` (a periodic job) claims due accounts with a
lease, one refresher per account, calls the platform outside any transaction, and
stores the new tokens (a rotated refresh token with them) in one transaction, if it
still holds the claim. A refused grant puts the account in `needs_reauth`; its
targets then fail with `account_needs_reauth` until it is connected again.

Flows are Authlib's (socialpub.connectors.oauth); nothing here builds a token request.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from sqlalchemy import and_, or_, select

from persistence.accounts import AccountStatus, AuthorizationStatus, ConnectedAccount, OAuthAuthorization
from persistence.workspaces import Workspace
from socialpub import claims, clock, crypto
from socialpub.config import OAUTH_ENDPOINTS
from socialpub.connectors import oauth
from socialpub.connectors.base import Identity, PlatformError
from socialpub.connectors.registry import connector_for
from socialpub.errors import ApiError
from socialpub.outbound import GuardedClient
from socialpub.tenancy import Actor, TenantScope, parse_id

logger = logging.getLogger("socialpub.accounts")

AUTHORIZATION_LIFETIME = dt.timedelta(minutes=10)
REFRESH_LEASE = dt.timedelta(seconds=60)
REFRESH_BATCH = 50
# A refresh that failed for a while (the platform down) is tried again after this.
REFRESH_RETRY = dt.timedelta(minutes=5)
# The platforms whose accounts connect through OAuth.
OAUTH_PLATFORMS: tuple[str, ...] = tuple(OAUTH_ENDPOINTS)


@dataclass(frozen=True)
class OAuthPlatform:
    platform: str
    label: str
    configured: bool


@dataclass
class Completion:
    """What completing an authorization came to: the connected account, or the
    identities to choose from (`authorization_id` names the wait)."""

    authorization_id: uuid.UUID
    account: ConnectedAccount | None = None
    choices: list[Identity] | None = None


def oauth_platforms(settings) -> list[OAuthPlatform]:
    """Every platform connected through OAuth, and whether this service is set up for
    it (a client id): one that is not is shown so, never a failure."""
    return [OAuthPlatform(platform, label, client_of(settings, platform) is not None)
            for platform, (label, *_endpoints) in OAUTH_ENDPOINTS.items()]


def client_of(settings, platform: str) -> oauth.OAuthClient | None:
    client_id = getattr(settings, f"{platform}_client_id", None)
    if not client_id:
        return None
    return oauth.OAuthClient(
        client_id=client_id, client_secret=getattr(settings, f"{platform}_client_secret") or None,
        authorize_url=getattr(settings, f"{platform}_authorize_url"), token_url=getattr(settings, f"{platform}_token_url"),
        api_url=getattr(settings, f"{platform}_api_url"), redirect_uri=settings.oauth_redirect_url,
        extra_scopes=tuple((getattr(settings, f"{platform}_extra_scopes", None) or "").split()),
    )


def _oauth_connector(platform: str):
    if platform not in OAUTH_ENDPOINTS:
        raise ApiError.field_invalid(
            "platform", f"{platform} does not connect through OAuth; OAuth platforms: {', '.join(OAUTH_ENDPOINTS)}."
        )
    return connector_for(platform)


def _configured(settings, platform: str) -> oauth.OAuthClient:
    client = client_of(settings, platform)
    if client is None:
        label = OAUTH_ENDPOINTS[platform][0]
        raise ApiError.field_invalid(
            "platform", f"{label} is not configured on this service: set SOCIALPUB_{platform.upper()}_CLIENT_ID and "
                        f"SOCIALPUB_{platform.upper()}_CLIENT_SECRET to connect {label} accounts.",
        )
    return client


def _live_scope(session, workspace_id, actor: Actor) -> TenantScope:
    scope = TenantScope.workspace(session, workspace_id, livemode=True, actor=actor)
    if session.get(Workspace, scope.workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    return scope


# -- connecting -------------------------------------------------------------------------


def start_authorization(*, session, actor: Actor, workspace_id, platform: str, settings, bound_to: str) -> str:
    """A new pending authorization; answers the URL to send the user to."""
    connector = _oauth_connector(platform)
    client = _configured(settings, platform)
    scope = _live_scope(session, workspace_id, actor)
    state, verifier = oauth.new_state(), oauth.new_verifier()
    scope.add(OAuthAuthorization(
        platform=platform, state=state, verifier_encrypted=crypto.encrypt_json({"verifier": verifier}),
        bound_to=bound_to, created_by=actor.name, status=AuthorizationStatus.PENDING,
        expires_at=clock.now() + AUTHORIZATION_LIFETIME,
    ))
    session.commit()
    return oauth.authorization_url(connector.oauth, client, state=state, code_verifier=verifier)


def state_of(callback_url: str) -> str | None:
    """The `state` a callback URL carries (the dashboard's callback page reads who the
    authorization is bound to from it)."""
    values = parse_qs(urlsplit(callback_url or "").query).get("state")
    return values[-1] if values else None


def authorization_for_state(*, session, state: str) -> OAuthAuthorization | None:
    """The pending authorization of a state, whoever it belongs to: for the callback
    page, which then completes it only for whom it is bound to."""
    if not state:
        return None
    return session.execute(select(OAuthAuthorization).where(OAuthAuthorization.state == state)).scalar_one_or_none()


def complete_authorization(*, session, actor: Actor, workspace_id, platform: str, callback_url: str, settings,
                           bound_to: str, client: GuardedClient | None = None) -> Completion:
    """Connects the account the callback URL's code grants, in live mode."""
    connector = _oauth_connector(platform)
    oauth_client = _configured(settings, platform)
    scope = _live_scope(session, workspace_id, actor)
    params = {key: values[-1] for key, values in parse_qs(urlsplit(callback_url or "").query).items()}
    state = params.get("state")
    if not state:
        raise ApiError.field_invalid("callback_url", "The callback URL has no state: give the whole URL the platform redirected to.")
    authorization = session.execute(claims.lock_rows(session, scope.select(
        OAuthAuthorization, OAuthAuthorization.state == state, OAuthAuthorization.platform == platform,
        OAuthAuthorization.bound_to == bound_to,
    ))).scalar_one_or_none()
    if authorization is None or authorization.status != AuthorizationStatus.PENDING:
        raise ApiError.field_invalid(
            "callback_url", "This authorization is unknown or was already used: start a new one."
        )
    # Used up now, whatever follows: a state is good for one try.
    authorization.status = AuthorizationStatus.DONE
    verifier = crypto.decrypt_json(authorization.verifier_encrypted).get("verifier")
    authorization.verifier_encrypted = None
    expired = authorization.expires_at <= clock.now()
    session.commit()
    if expired:
        raise ApiError.field_invalid("callback_url", "This authorization expired (10 minutes): start a new one.")
    if params.get("error"):
        raise ApiError.field_invalid(
            "callback_url", f"{OAUTH_ENDPOINTS[platform][0]} refused the authorization: "
                            f"{params.get('error_description') or params['error']}"[:500],
        )
    if not params.get("code"):
        raise ApiError.field_invalid("callback_url", "The callback URL has no code: give the whole URL the platform redirected to.")
    guarded = client or GuardedClient()
    try:
        tokens = oauth.exchange_code(connector.oauth, oauth_client, guarded, code=params["code"], code_verifier=verifier)
        identities = connector.identities(api_url=oauth_client.api_url, access_token=tokens.access_token)
    except PlatformError as exc:
        raise ApiError.field_invalid("callback_url", f"Connecting failed: {exc.message}") from None
    if not identities:
        raise ApiError.field_invalid("callback_url", f"{OAUTH_ENDPOINTS[platform][0]} named nothing these tokens publish as.")
    if len(identities) == 1:
        account = _connect(scope, platform, identities[0], tokens, oauth_client.api_url, settings)
        authorization.account_id = account.id
        session.commit()
        return Completion(authorization.id, account=account)
    authorization.status = AuthorizationStatus.CHOOSING
    authorization.expires_at = clock.now() + AUTHORIZATION_LIFETIME
    authorization.choices_encrypted = crypto.encrypt_json({
        "tokens": {"access_token": tokens.access_token, "refresh_token": tokens.refresh_token,
                   "expires_at": tokens.expires_at.isoformat() if tokens.expires_at else None,
                   "scope": tokens.scope, "extra": tokens.extra},
        "identities": [{"external_id": i.external_id, "handle": i.handle, "options": i.options, "secrets": i.secrets}
                       for i in identities],
    })
    session.commit()
    return Completion(authorization.id, choices=identities)


def choose_identity(*, session, actor: Actor, workspace_id, authorization_id, external_id: str, settings,
                    bound_to: str) -> ConnectedAccount:
    """Connects the chosen identity of an authorization waiting for a choice."""
    scope = _live_scope(session, workspace_id, actor)
    parsed = parse_id(authorization_id)
    authorization = session.execute(claims.lock_rows(session, scope.select(
        OAuthAuthorization, OAuthAuthorization.id == parsed, OAuthAuthorization.bound_to == bound_to,
    ))).scalar_one_or_none() if parsed else None
    if authorization is None or authorization.status != AuthorizationStatus.CHOOSING:
        raise ApiError.not_found("authorization", authorization_id)
    if authorization.expires_at <= clock.now():
        authorization.status, authorization.choices_encrypted = AuthorizationStatus.DONE, None
        session.commit()
        raise ApiError.field_invalid("authorization", "This choice expired (10 minutes): connect the account again.")
    kept = crypto.decrypt_json(authorization.choices_encrypted)
    chosen = [i for i in kept["identities"] if i["external_id"] == str(external_id)]
    if not chosen:
        names = ", ".join(f"{i['external_id']} ({i['handle']})" for i in kept["identities"])
        raise ApiError.field_invalid("identity", f"Not one of this authorization's choices: {names}.")
    saved = kept["tokens"]
    tokens = oauth.TokenSet(
        access_token=saved["access_token"], refresh_token=saved["refresh_token"],
        expires_at=dt.datetime.fromisoformat(saved["expires_at"]) if saved["expires_at"] else None,
        scope=saved["scope"], extra=saved["extra"] or {},
    )
    identity = Identity(**chosen[0])
    client = _configured(settings, authorization.platform)
    account = _connect(scope, authorization.platform, identity, tokens, client.api_url, settings)
    authorization.status, authorization.choices_encrypted, authorization.account_id = (
        AuthorizationStatus.DONE, None, account.id,
    )
    session.commit()
    return account


def _connect(scope: TenantScope, platform: str, identity: Identity, tokens: oauth.TokenSet, api_url: str,
             settings) -> ConnectedAccount:
    """The live account for this identity: updated when it was connected before,
    else new. The caller commits."""
    account = scope.session.execute(claims.lock_rows(scope.session, scope.select(
        ConnectedAccount, ConnectedAccount.platform == platform, ConnectedAccount.connector == platform,
        ConnectedAccount.external_id == identity.external_id,
    ))).scalars().first()
    previous = crypto.decrypt_json(account.secrets_encrypted) if account is not None else {}
    secrets = {**tokens.secrets(previous), **identity.secrets}
    options = {**identity.options, "api_url": api_url}
    if account is None:
        account = scope.add(ConnectedAccount(platform=platform, connector=platform, external_id=identity.external_id),
                            livemode=True)
    account.handle = identity.handle[:200]
    account.options = options
    account.secrets_encrypted = crypto.encrypt_json(secrets)
    account.status, account.status_reason = AccountStatus.ACTIVE, None
    _schedule_refresh(account, tokens.expires_at, bool(secrets.get("refresh_token")), settings)
    return account


def _schedule_refresh(account: ConnectedAccount, expires_at, refreshable: bool, settings) -> None:
    account.token_expires_at = expires_at
    account.refresh_lease_until = account.refresh_claim_token = None
    if refreshable and expires_at is not None:
        account.refresh_due_at = expires_at - dt.timedelta(seconds=settings.oauth_refresh_margin_seconds)
    else:
        account.refresh_due_at = None


# -- refreshing -------------------------------------------------------------------------


def _due(now):
    return and_(
        ConnectedAccount.refresh_due_at <= now, ConnectedAccount.status == AccountStatus.ACTIVE,
        or_(ConnectedAccount.refresh_lease_until.is_(None), ConnectedAccount.refresh_lease_until < now),
    )


def refresh_due_tokens(*, database, settings, client: GuardedClient | None = None, now=None) -> int:
    """Refreshes the tokens of every account due, one refresher per account; answers
    how many it refreshed."""
    now = now or clock.now()
    token = str(uuid.uuid4())
    with database.transaction() as session:
        taken = claims.claim(
            session, ConnectedAccount, _due(now), values={
                ConnectedAccount.refresh_lease_until: now + REFRESH_LEASE, ConnectedAccount.refresh_claim_token: token,
            }, order_by=ConnectedAccount.refresh_due_at, limit=REFRESH_BATCH, of=ConnectedAccount,
        )
    guarded = client or GuardedClient()
    return sum(1 for account_id in taken if _refresh_one(database, settings, guarded, account_id, token))


def _held(session, account_id, token) -> ConnectedAccount | None:
    account = session.execute(claims.lock_rows(session, select(ConnectedAccount).where(
        ConnectedAccount.id == account_id
    ))).scalar_one_or_none()
    return account if account is not None and account.refresh_claim_token == token else None


def _refresh_one(database, settings, guarded: GuardedClient, account_id, token: str) -> bool:
    with database.transaction() as session:
        account = _held(session, account_id, token)
        if account is None:
            return False
        platform, secrets = account.platform, crypto.decrypt_json(account.secrets_encrypted)
    client = client_of(settings, platform)
    error = None
    if client is None or not secrets.get("refresh_token"):
        error = PlatformError("account_needs_reauth", f"{platform} is not configured here, or the account has no refresh token",
                              transient=False, auth_failed=True)
        tokens = None
    else:
        try:
            tokens = oauth.refresh(connector_for(platform).oauth, client, guarded, refresh_token=secrets["refresh_token"])
        except PlatformError as exc:
            tokens, error = None, exc
    with database.transaction() as session:
        account = _held(session, account_id, token)
        if account is None:
            return False  # the lease ran out and another refresher took it over
        if tokens is not None:
            account.secrets_encrypted = crypto.encrypt_json(tokens.secrets(secrets))
            _schedule_refresh(account, tokens.expires_at, True, settings)
            return True
        account.refresh_lease_until = account.refresh_claim_token = None
        if error.transient:
            account.refresh_due_at = clock.now() + REFRESH_RETRY
            logger.warning("token refresh failed; trying again later",
                           extra={"account_id": str(account_id), "code": error.code})
            return False
        account.status = AccountStatus.NEEDS_REAUTH
        account.status_reason = f"Refreshing its access token failed ({error.message}); connect it again."[:1000]
        account.refresh_due_at = None
        logger.warning("token refresh refused; the account needs to be connected again",
                       extra={"account_id": str(account_id)})
        return False
