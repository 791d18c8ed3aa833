"""The dashboard's forms (WTForms, for parsing and field messages). CSRF is checked
for every POST by the blueprint, so the forms themselves carry no token logic.
Business rules stay in the services; these only turn text into typed values."""
from __future__ import annotations

from wtforms import Form, IntegerField, PasswordField, RadioField, SelectField, SelectMultipleField, StringField, TextAreaField
from wtforms.validators import URL, DataRequired, Length, NumberRange, Optional, StopValidation

from socialpub.scopes import ALL_SCOPES
from socialpub.keys import service as api_keys
from socialpub.ai import brand_context
from socialpub.events.service import EVENT_TYPES
from socialpub.platforms import PLATFORMS, display_name

MODES = [("test", "Test"), ("live", "Live")]
# The key form's heading for each scope area (a scope's part before the `:`): it
# groups the scopes of socialpub/scopes.py by area, in that module's order.
AREA_NAMES = {
    "posts": "Posts", "analytics": "Analytics", "conversations": "Conversations", "workspace": "Workspace",
    "templates": "Templates", "calendar": "Calendar", "crisis": "Crisis", "listening": "Listening",
    "competitors": "Competitors", "linkinbio": "Link in bio", "influencers": "Influencers", "search": "Search",
    "uploads": "Uploads", "media": "Media",
}


NUL_REFUSED = "This field must not contain the NUL character."


class DashboardForm(Form):
    """Every dashboard form: a NUL character in any submitted value is refused on its
    field (PostgreSQL cannot store one in text, and no field has a use for it)."""

    def validate(self, extra_validators=None):
        extra = {name: list(validators) for name, validators in (extra_validators or {}).items()}
        for name in self._fields:
            extra.setdefault(name, []).append(_no_nul)
        return super().validate(extra_validators=extra)


def _no_nul(form, field) -> None:
    if any(isinstance(value, str) and "\x00" in value for value in field.raw_data or ()):
        raise StopValidation(NUL_REFUSED)


def scope_areas() -> list[tuple[str, list[str]]]:
    areas: dict[str, list[str]] = {}
    for scope in ALL_SCOPES:
        areas.setdefault(scope.split(":", 1)[0], []).append(scope)
    return [(AREA_NAMES.get(area, area.capitalize()), scopes) for area, scopes in areas.items()]


class SignInForm(DashboardForm):
    email = StringField("Email", [DataRequired("Enter your email address."), Length(max=254)])
    password = PasswordField("Password", [DataRequired("Enter your password.")])


class KeyCreateForm(DashboardForm):
    name = StringField("Name", [DataRequired("Give the key a name."), Length(max=200)],
                       description="What the key is for, e.g. “Production scheduler”.")
    mode = RadioField("Mode", choices=MODES, default="test",
                      validators=[DataRequired("Choose test or live mode.")])
    scopes = SelectMultipleField("Scopes", choices=[(s, s) for s in ALL_SCOPES],
                                 validators=[DataRequired("Choose at least one scope.")])
    per_minute = IntegerField(
        "Requests per minute", [Optional(), NumberRange(1, api_keys.MAX_PER_MINUTE)],
        description=f"Optional, 1 to {api_keys.MAX_PER_MINUTE:,}. Default 60; the service ceiling of 100 a minute still applies.",
    )
    per_day = IntegerField(
        "Requests per day", [Optional(), NumberRange(1, api_keys.MAX_PER_DAY)],
        description=f"Optional, 1 to {api_keys.MAX_PER_DAY:,}. Default 10,000.",
    )
    expires_in_days = IntegerField(
        "Expires after (days)", [Optional(), NumberRange(1, 3650)],
        description="Optional, 1 to 3,650. Leave empty for a key that does not expire.",
    )


GRACE_CHOICES = [("0", "Immediately"), ("1", "After 1 hour"), ("24", "After 24 hours"), ("72", "After 3 days"), ("168", "After 7 days")]


class KeyRollForm(DashboardForm):
    grace_hours = SelectField("Old value stops working", choices=GRACE_CHOICES, default="24",
                              validators=[DataRequired("Choose when the old value stops working.")])


def _lines(text: str | None) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def _posts(text: str | None) -> list[str]:
    """Sample posts are separated by a line holding only ---, so a post may have blank lines."""
    posts, current = [], []
    for line in (text or "").splitlines():
        if line.strip() == "---":
            posts.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    posts.append("\n".join(current).strip())
    return [post for post in posts if post]


class BrandContextForm(DashboardForm):
    voice = TextAreaField("Voice", [Length(max=brand_context.MAX_TEXT)],
                          description="How posts should sound, e.g. “warm, plain-spoken, no jargon”.")
    audience = TextAreaField("Audience", [Length(max=brand_context.MAX_TEXT)],
                             description="Who the posts are for.")
    banned_words = TextAreaField("Banned words", description="One word or phrase per line. The AI assistant never writes them.")
    hashtags = TextAreaField("Hashtags", description="One per line, with or without the #.")
    sample_posts = TextAreaField("Sample posts", description="Posts that show the voice. Separate posts with a line holding only ---.")

    def values(self) -> dict:
        return dict(
            voice=self.voice.data or "", audience=self.audience.data or "",
            banned_words=_lines(self.banned_words.data), hashtags=_lines(self.hashtags.data),
            sample_posts=_posts(self.sample_posts.data),
        )

    @classmethod
    def from_context(cls, context) -> "BrandContextForm":
        return cls(data=dict(
            voice=context.voice, audience=context.audience, banned_words="\n".join(context.banned_words),
            hashtags="\n".join(context.hashtags), sample_posts="\n---\n".join(context.sample_posts),
        ))


# Which form fields each connector reads, as (options, secrets). The service validates them.
CONNECTOR_FIELDS = {
    "sandbox": ((), ()),
    "mastodon": (("instance_url",), ("access_token",)),
    "bluesky": (("service_url",), ("identifier", "app_password")),
    "telegram": (("chat_id",), ("bot_token",)),
    "discord": (("guild_id",), ("webhook_url",)),
}


class AccountConnectForm(DashboardForm):
    platform = SelectField("Platform", choices=[(p, display_name(p)) for p in PLATFORMS],
                           validators=[DataRequired("Choose a platform.")])
    mode = RadioField("Mode", choices=MODES, default="test", validators=[DataRequired("Choose test or live mode.")])
    connector = SelectField("Connector", choices=[(c, c.capitalize()) for c in CONNECTOR_FIELDS], default="sandbox",
                            description="Test mode uses the sandbox, which never reaches a real platform.")
    handle = StringField("Handle", [DataRequired("Enter the account's handle."), Length(max=200)],
                         description="The account's name on the platform, e.g. @acme.")
    instance_url = StringField("Mastodon instance URL", [Optional(), URL(require_tld=False, message="Enter a URL such as https://mastodon.social.")])
    access_token = PasswordField("Mastodon access token")
    service_url = StringField("Bluesky service URL", [Optional(), URL(require_tld=False, message="Enter a URL such as https://bsky.social.")])
    identifier = StringField("Bluesky handle or email")
    app_password = PasswordField("Bluesky app password")
    chat_id = StringField("Telegram chat id")
    bot_token = PasswordField("Telegram bot token")
    webhook_url = PasswordField("Discord webhook URL")
    guild_id = StringField("Discord server id (optional)")

    def settings(self) -> tuple[dict, dict]:
        option_names, secret_names = CONNECTOR_FIELDS[self.connector.data]
        options = {name: self[name].data.strip() for name in option_names if (self[name].data or "").strip()}
        secrets = {name: self[name].data.strip() for name in secret_names if (self[name].data or "").strip()}
        return options, secrets


class WebhookCreateForm(DashboardForm):
    url = StringField("Endpoint URL", [DataRequired("Enter the URL that receives events."), Length(max=2048)],
                      description="https:// (plain http:// only in test mode). Events are POSTed here, signed.")
    description = TextAreaField("Description", [Optional(), Length(max=500)], description="Optional: what receives these events.")
    mode = RadioField("Mode", choices=MODES, default="test", validators=[DataRequired("Choose test or live mode.")],
                      description="The endpoint receives the events of this mode only.")
    event_types = SelectMultipleField("Event types", choices=[], validate_choice=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.event_types.choices = [(t, t) for t in EVENT_TYPES]

    def chosen_event_types(self) -> list[str] | None:
        """None (every type, including ones added later) when none is ticked."""
        return list(self.event_types.data) or None
