"""The matcher shared by the test operation and the poll: reused only while a rule's
matching columns are unchanged."""
from __future__ import annotations

from socialpub.autoreply import service
from socialpub.autoreply.matching import Sample
from socialpub.tenancy import TenantScope
from tests.autoreply.factories import make_rule
from tests.support.factories import OPERATOR


def test_a_changed_rule_is_never_matched_by_its_old_matcher(session, workspace):
    rule = make_rule(session, workspace, keywords=("price",))
    scope = TenantScope.workspace(session, workspace.id, False, actor=OPERATOR)
    sample = Sample(text="what does it cost?", platform="mastodon", message_type="comment")
    [first] = service.enabled_matchers(scope)
    assert first.evaluate(sample).matched is False
    rule.trigger = {**rule.trigger, "keywords": ["cost"]}
    session.commit()
    [second] = service.enabled_matchers(scope)
    assert second is not first and second.evaluate(sample).matched is True
    [third] = service.enabled_matchers(scope)
    assert third is second
