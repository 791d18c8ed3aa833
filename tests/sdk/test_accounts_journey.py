"""Connected accounts through the generated client: list them, read one."""
from __future__ import annotations

import uuid

import pytest
from socialpub_client.api.accounts import get_account, list_accounts
from socialpub_client.models.account_list import AccountList
from socialpub_client.models.account_response import AccountResponse
from socialpub_client.models.platform_input import PlatformInput

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow


def test_list_and_read_accounts(sdk_server: SdkServer) -> None:
    client = sdk_server.client(sdk_server.keys.read_only)
    listed = expect(list_accounts.sync_detailed(client=client, platform=PlatformInput.MASTODON), 200, AccountList)
    assert [account.platform for account in listed.data] == ["mastodon"]
    mastodon = listed.data[0]
    assert mastodon.connector == "sandbox" and mastodon.livemode is False

    read = expect(get_account.sync_detailed(mastodon.id, client=client), 200, AccountResponse).data
    assert read.id == mastodon.id and read.handle == mastodon.handle

    expect_error(get_account.sync_detailed(uuid.uuid4(), client=client), 404, "resource_not_found")
