"""The settings' declarations and their reading from the environment; secrets
generated once into var/ on the embedded default."""
import dataclasses
import stat
import threading
from pathlib import Path

import pytest

from socialpub import config, crypto
from socialpub.config import DECLARED, READ_ELSEWHERE, Settings, generated_once


class TestGeneratedOnce:
    def test_generates_once_then_reads_the_same(self, tmp_path):
        path = tmp_path / "var" / "secret.key"
        first = generated_once(path, lambda: "first")
        assert first == "first" and generated_once(path, lambda: "second") == "first"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert [p.name for p in path.parent.iterdir()] == ["secret.key"]  # no drafts left behind

    def test_processes_starting_together_agree_on_one_whole_secret(self, tmp_path):
        path = tmp_path / "encryption.key"
        start = threading.Barrier(8, timeout=1)
        seen = []

        def slow_secret(number):
            def generate():
                try:
                    start.wait()  # every one of them is past the "does it exist" check
                except threading.BrokenBarrierError:
                    pass  # fewer of them generate: the race is then around one slow writer
                return f"secret-{number}" * 100
            return generate

        threads = [threading.Thread(target=lambda n=n: seen.append(generated_once(path, slow_secret(n)))) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert len(seen) == 8 and len(set(seen)) == 1 and seen[0].startswith("secret-")
        assert path.read_text() == seen[0]


# --- the settings' declarations ---------------------------------------------------------

@pytest.fixture
def environ(monkeypatch):
    """No setting in the environment: each test sets what it reads."""
    for declared in DECLARED:
        monkeypatch.delenv(declared.setting.env, raising=False)
    return monkeypatch


class TestDeclarations:
    def test_every_field_has_an_environment_variable_and_help(self):
        fields = dataclasses.fields(Settings)
        assert [declared.name for declared in DECLARED] == [field.name for field in fields]
        for field in fields:
            spec = field.metadata["setting"]
            assert spec.env and spec.help.strip(), field.name
            assert spec.env == {"database_url": "DATABASE_URL", "redis_url": "REDIS_URL"}.get(
                field.name, f"SOCIALPUB_{field.name.upper()}"
            ), field.name
        envs = [declared.setting.env for declared in DECLARED] + [variable.env for variable in READ_ELSEWHERE]
        assert len(envs) == len(set(envs))

    def test_every_number_has_a_lower_bound(self):
        for declared in DECLARED:
            if declared.type in (int, float):
                assert declared.setting.min is not None, declared.name

    def test_variables_read_elsewhere_are_the_ones_those_modules_read(self):
        assert [variable.env for variable in READ_ELSEWHERE if variable.read_by == "socialpub.crypto"] == [
            crypto.ENVIRONMENT_VARIABLE
        ]
        for variable in READ_ELSEWHERE:
            module = __import__(variable.read_by, fromlist=["_"])
            assert variable.env in Path(module.__file__).read_text(), variable

    def test_a_setting_without_its_declaration_is_refused(self):
        @dataclasses.dataclass(frozen=True)
        class Undeclared:
            plain: int = 3

        with pytest.raises(TypeError, match="plain"):
            config._declarations(Undeclared)


class TestDefaults:
    def test_defaults_are_unchanged(self):
        settings = Settings()
        assert settings.database_url == config.DEFAULT_DATABASE_URL
        assert settings.redis_url is None and settings.secret_key is None and settings.ai_base_url is None
        assert settings.queue_backend == "inline"
        assert settings.rate_limit_ceiling_per_minute == 100 and settings.rate_limit_default_per_day == 10_000
        assert settings.max_body_bytes == 1024 * 1024
        assert settings.rate_limit_redis_connect_timeout_seconds == 0.05
        assert settings.database_idle_in_transaction_timeout_seconds == 300.0
        assert settings.publish_lease_seconds == 120 and settings.retry_max_seconds == 3600.0
        assert settings.webhook_retry_max_seconds == 6 * 3600.0 and settings.webhook_retry_window_seconds == 3 * 86400.0
        assert settings.dashboard_session_max_seconds == 12 * 3600 and settings.dashboard_session_idle_seconds == 30 * 60
        assert settings.log_level == "INFO" and settings.log_json is True and settings.validate_responses is False
        assert settings.session_cookie_secure == "auto" and settings.ai_model == "gpt-4o-mini"
        assert settings.template_hashtag_limits == "instagram=5,threads=1"
        assert settings.rss_max_bytes == 5 * 1024 * 1024 and settings.analytics_batch_size == 50_000

    def test_types_of_the_defaults_are_the_declared_ones(self):
        for declared in DECLARED:
            assert declared.default is None and declared.optional or type(declared.default) is declared.type, declared.name

    def test_an_empty_environment_gives_the_defaults(self, environ):
        assert Settings.from_env() == Settings()

    def test_settings_stay_frozen_hashable_and_replaceable(self):
        settings = Settings()
        assert {settings: 1}[Settings()] == 1
        with pytest.raises(dataclasses.FrozenInstanceError):
            settings.publish_lease_seconds = 1
        assert dataclasses.replace(settings, publish_lease_seconds=7).publish_lease_seconds == 7
        assert settings.replace(queue_backend="rq").queue_backend == "rq"


class TestFromEnv:
    def test_reads_each_type(self, environ):
        environ.setenv("SOCIALPUB_PUBLISH_LEASE_SECONDS", " 300 ")
        environ.setenv("SOCIALPUB_RETRY_BASE_SECONDS", "2.5")
        environ.setenv("SOCIALPUB_LOG_JSON", "No")
        environ.setenv("SOCIALPUB_VALIDATE_RESPONSES", "ON")
        environ.setenv("SOCIALPUB_AI_MODEL", "llama3")
        environ.setenv("DATABASE_URL", "sqlite:///elsewhere.db")
        settings = Settings.from_env()
        assert settings.publish_lease_seconds == 300 and settings.retry_base_seconds == 2.5
        assert settings.log_json is False and settings.validate_responses is True
        assert settings.ai_model == "llama3" and settings.database_url == "sqlite:///elsewhere.db"

    def test_an_empty_variable_is_unset(self, environ):
        for name in ("SOCIALPUB_PUBLISH_LEASE_SECONDS", "SOCIALPUB_LOG_JSON", "REDIS_URL", "SOCIALPUB_AI_MODEL", "DATABASE_URL"):
            environ.setenv(name, "")
        assert Settings.from_env() == Settings()

    def test_an_empty_hashtag_limit_means_no_limits(self, environ):
        environ.setenv("SOCIALPUB_TEMPLATE_HASHTAG_LIMITS", "")
        assert Settings.from_env().template_hashtag_limits == ""

    def test_the_cookie_flag_is_read_in_lower_case(self, environ):
        environ.setenv("SOCIALPUB_SESSION_COOKIE_SECURE", " TRUE ")
        assert Settings.from_env().session_cookie_secure == "true"

    def test_extra_oauth_scopes_are_read_as_a_list_of_names(self, environ):
        environ.setenv("SOCIALPUB_LINKEDIN_EXTRA_SCOPES", " r_member_social,r_member_profileAnalytics  r_member_social ")
        assert Settings.from_env().linkedin_extra_scopes == "r_member_social r_member_profileAnalytics"
        environ.setenv("SOCIALPUB_LINKEDIN_EXTRA_SCOPES", "r_member_social; drop")
        with pytest.raises(ValueError, match="SOCIALPUB_LINKEDIN_EXTRA_SCOPES must list scope names.*'r_member_social;'"):
            Settings.from_env()

    def test_the_queue_follows_redis_unless_named(self, environ):
        assert Settings.from_env().queue_backend == "inline"
        environ.setenv("REDIS_URL", "redis://cache:6379/0")
        assert Settings.from_env().queue_backend == "rq"
        environ.setenv("SOCIALPUB_QUEUE_BACKEND", "inline")
        assert Settings.from_env().queue_backend == "inline"
        # Constructed settings keep their declared default, as before.
        assert Settings(redis_url="redis://cache:6379/0").queue_backend == "inline"

    def test_overrides_win(self, environ):
        environ.setenv("SOCIALPUB_PUBLISH_LEASE_SECONDS", "300")
        assert Settings.from_env(publish_lease_seconds=9, log_level="DEBUG").publish_lease_seconds == 9
        with pytest.raises(TypeError):
            Settings.from_env(no_such_setting=1)

    @pytest.mark.parametrize("name, raw, message", [
        ("SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE", "lots", "SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE must be an integer, got 'lots'"),
        ("SOCIALPUB_PUBLISH_LEASE_SECONDS", "1.5", "SOCIALPUB_PUBLISH_LEASE_SECONDS must be an integer, got '1.5'"),
        ("SOCIALPUB_RETRY_BASE_SECONDS", "soon", "SOCIALPUB_RETRY_BASE_SECONDS must be a number, got 'soon'"),
    ])
    def test_a_value_that_is_not_a_number_is_refused(self, environ, name, raw, message):
        environ.setenv(name, raw)
        with pytest.raises(ValueError) as refused:
            Settings.from_env()
        assert str(refused.value) == message

    @pytest.mark.parametrize("name, raw, message", [
        ("SOCIALPUB_PUBLISH_CONCURRENCY", "0", "SOCIALPUB_PUBLISH_CONCURRENCY must be at least 1, got '0'"),
        ("SOCIALPUB_INLINE_JOB_WORKERS", "-2", "SOCIALPUB_INLINE_JOB_WORKERS must be at least 1, got '-2'"),
        ("SOCIALPUB_DATABASE_STATEMENT_TIMEOUT_SECONDS", "-1", "SOCIALPUB_DATABASE_STATEMENT_TIMEOUT_SECONDS must be at least 0, got '-1'"),
        ("SOCIALPUB_TRUSTED_PROXY_HOPS", "-1", "SOCIALPUB_TRUSTED_PROXY_HOPS must be at least 0, got '-1'"),
        ("SOCIALPUB_WEBHOOK_TIMEOUT_SECONDS", "nan", "SOCIALPUB_WEBHOOK_TIMEOUT_SECONDS must be at least 0, got 'nan'"),
    ])
    def test_a_value_out_of_bounds_is_refused(self, environ, name, raw, message):
        environ.setenv(name, raw)
        with pytest.raises(ValueError) as refused:
            Settings.from_env()
        assert str(refused.value) == message

    def test_an_upper_bound_is_named_too(self, environ):
        declared = dataclasses.replace(DECLARED[0], type=int, setting=config.Setting("SOCIALPUB_EXAMPLE", "help", min=1, max=10))
        assert declared.read({"SOCIALPUB_EXAMPLE": "10"}, {}) == 10
        with pytest.raises(ValueError, match=r"^SOCIALPUB_EXAMPLE must be at most 10, got '11'$"):
            declared.read({"SOCIALPUB_EXAMPLE": "11"}, {})

    def test_zero_stays_accepted_where_it_turns_a_deadline_off(self, environ):
        for name in ("SOCIALPUB_DATABASE_STATEMENT_TIMEOUT_SECONDS", "SOCIALPUB_HEADER_READ_TIMEOUT_SECONDS",
                     "SOCIALPUB_DATABASE_RESPONSE_TIMEOUT_SECONDS", "SOCIALPUB_TRUSTED_PROXY_HOPS"):
            environ.setenv(name, "0")
        settings = Settings.from_env()
        assert settings.database_statement_timeout_seconds == 0 and settings.trusted_proxy_hops == 0
