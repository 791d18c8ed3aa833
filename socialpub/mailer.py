"""The one mailer of the service (cross-cutting): plain-text email through the SMTP
server of `SOCIALPUB_SMTP_URL`, from `SOCIALPUB_MAIL_FROM`.

    smtp://[user:password@]host[:port]           port 25; STARTTLS when the server offers it
    smtp+starttls://[user:password@]host[:port]  port 587; STARTTLS required
    smtps://[user:password@]host[:port]          port 465; TLS from the start

User and password are percent-encoded in the URL. TLS checks the server's certificate
against the system's trusted authorities. Without `SOCIALPUB_SMTP_URL` there is no
mailer (`Mailer.from_settings` is None): whoever sends email records it and leaves it
unsent. Sending is synchronous and bounded by `SOCIALPUB_SMTP_TIMEOUT_SECONDS` per
step, so it belongs in a job, never in a request or a transaction. A failure raises
`MailFailed`, whose message never quotes the credentials.

`configured_mailer` is the mailer whoever sends email asks for (None: keep it
queued), and `checked_email` the one rule for an address the service keeps (crisis
contacts, influencers).
"""
from __future__ import annotations

import logging
import re
import smtplib
import ssl
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr
from urllib.parse import unquote, urlsplit

from socialpub.errors import ApiError
from socialpub.validation import unstorable

logger = logging.getLogger("socialpub.mailer")

SCHEMES = {"smtp": ("opportunistic", 25), "smtp+starttls": ("starttls", 587), "smtps": ("tls", 465)}
# Line breaks and other control characters never reach a header (no header injection).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
MAX_EMAIL_CHARS = 254
# What the service takes as an address (crisis contacts, influencers): one @, a dot in
# the domain, no spaces or control characters (so never a second header line).
EMAIL = re.compile(r"^[^@\s\x00-\x1f\x7f]{1,64}@[^@\s\x00-\x1f\x7f.]+(\.[^@\s\x00-\x1f\x7f.]+)+$")


class MailFailed(Exception):
    """The message was not accepted: `code` is the SMTP server's reply code when it
    answered one (421, 550...), None when it could not be reached or did not answer."""

    def __init__(self, message: str, *, code: int | None = None):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    # opportunistic (STARTTLS when offered), starttls (required) or tls (implicit).
    security: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, url: str) -> "SmtpServer":
        """The server of an SMTP URL; a ValueError naming the setting (never the
        password) for one that is not."""
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError:
            raise ValueError("SOCIALPUB_SMTP_URL is not a valid URL") from None
        scheme = parts.scheme.lower()
        if scheme not in SCHEMES:
            raise ValueError(f"SOCIALPUB_SMTP_URL must start with {', '.join(f'{name}://' for name in SCHEMES)}")
        if not parts.hostname:
            raise ValueError("SOCIALPUB_SMTP_URL names no host")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError("SOCIALPUB_SMTP_URL takes no path, query or fragment")
        security, default_port = SCHEMES[scheme]
        user = unquote(parts.username) if parts.username else None
        password = unquote(parts.password) if parts.password is not None else None
        return cls(parts.hostname, port or default_port, security, user, password)


def clean_header(text: str, *, longest: int = 250) -> str:
    """`text` fit for a header: control characters (line breaks) become one space."""
    cleaned = _CONTROL.sub(" ", text).strip()
    return cleaned if len(cleaned) <= longest else cleaned[: longest - 1] + "…"


class Mailer:
    def __init__(self, server: SmtpServer, *, sender: str, timeout: float = 10.0):
        self.server = server
        self.sender = sender
        self.timeout = timeout

    @classmethod
    def from_settings(cls, settings) -> "Mailer | None":
        """The service's mailer, or None when no SMTP server is configured."""
        if not settings.smtp_url:
            return None
        return cls(SmtpServer.parse(settings.smtp_url), sender=settings.mail_from, timeout=settings.smtp_timeout_seconds)

    def message(self, *, to: str, subject: str, text: str, message_id: str | None = None) -> EmailMessage:
        message = EmailMessage()
        message["From"] = clean_header(self.sender)
        message["To"] = clean_header(to)
        message["Subject"] = clean_header(subject)
        message["Date"] = formatdate(usegmt=True)
        domain = parseaddr(self.sender)[1].rpartition("@")[2] or "localhost"
        message["Message-ID"] = f"<{message_id}@{domain}>" if message_id else make_msgid(domain=domain)
        message.set_content(text)
        return message

    def send(self, *, to: str, subject: str, text: str, message_id: str | None = None) -> None:
        """Sends one message; `MailFailed` when the server did not accept it."""
        message = self.message(to=to, subject=subject, text=text, message_id=message_id)
        sender = parseaddr(self.sender)[1] or self.sender
        try:
            with self._connect() as client:
                client.ehlo()
                if self.server.security == "starttls" or (
                    self.server.security == "opportunistic" and client.has_extn("starttls")
                ):
                    client.starttls(context=ssl.create_default_context())
                    client.ehlo()
                if self.server.user:
                    client.login(self.server.user, self.server.password or "")
                refused = client.send_message(message, from_addr=sender, to_addrs=[to])
        except smtplib.SMTPRecipientsRefused as exc:
            code, reply = next(iter(exc.recipients.values()), (None, b""))
            raise MailFailed(_answered(code, reply, "refused the recipient"), code=code) from None
        except smtplib.SMTPResponseException as exc:
            raise MailFailed(_answered(exc.smtp_code, exc.smtp_error, "refused the message"), code=exc.smtp_code) from None
        except smtplib.SMTPNotSupportedError:
            raise MailFailed("The SMTP server does not offer STARTTLS, which SOCIALPUB_SMTP_URL requires.") from None
        except ssl.SSLError as exc:
            raise MailFailed(f"TLS with the SMTP server failed: {exc.reason or exc.__class__.__name__}.") from None
        except TimeoutError:
            raise MailFailed(f"The SMTP server did not answer within {self.timeout:g} s.") from None
        except smtplib.SMTPException as exc:
            # The server hung up or answered what SMTP does not allow (no reply code to give).
            raise MailFailed(f"The SMTP session with {self._where()} failed ({exc.__class__.__name__}).") from None
        except OSError as exc:
            raise MailFailed(f"Could not reach the SMTP server {self._where()} ({exc.strerror or exc.__class__.__name__}).") from None
        if refused:
            code, reply = next(iter(refused.values()))
            raise MailFailed(_answered(code, reply, "refused the recipient"), code=code)

    def _where(self) -> str:
        return f"{self.server.host}:{self.server.port}"

    def _connect(self) -> smtplib.SMTP:
        if self.server.security == "tls":
            return smtplib.SMTP_SSL(self.server.host, self.server.port, timeout=self.timeout,
                                    context=ssl.create_default_context())
        return smtplib.SMTP(self.server.host, self.server.port, timeout=self.timeout)


def _answered(code, reply, what: str) -> str:
    text = reply.decode("utf-8", "replace") if isinstance(reply, bytes) else str(reply or "")
    text = clean_header(text, longest=300)
    return f"The SMTP server {what}: {code} {text}".rstrip()


def configured_mailer(settings) -> Mailer | None:
    """The service's mailer; None when none is configured, or when its URL is unusable
    (logged: whatever waits for email stays queued)."""
    try:
        return Mailer.from_settings(settings)
    except ValueError as exc:
        logger.error("email waits: %s", exc)
        return None


def checked_email(email, *, field: str = "email") -> str:
    """An address as the service keeps it (trimmed, lower-cased); 422 naming `field`
    for one that is blank or not an address."""
    value = email.strip().lower() if isinstance(email, str) else ""
    if not value:
        raise ApiError.field_invalid(field, f"{field} must not be blank.")
    if len(value) > MAX_EMAIL_CHARS or unstorable(value) or not EMAIL.match(value):
        raise ApiError.field_invalid(
            field, f"{field} must be an address such as comms@example.com, at most {MAX_EMAIL_CHARS} characters."
        )
    return value
