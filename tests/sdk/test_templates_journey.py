"""Content templates through the generated client: a hashtag set and a collection, a
template that uses both, searched, used (filled, hashtags within Threads' limit, then
as a draft post, answered 201 with its Location), updated, refused when a placeholder
is undeclared, and deleted; the collection and hashtag set renamed, changed and
removed."""
from __future__ import annotations

import pytest
from socialpub_client.api.templates import (
    create_hashtag_set,
    create_template,
    create_template_collection,
    delete_hashtag_set,
    delete_template,
    delete_template_collection,
    get_template,
    list_hashtag_sets,
    list_template_collections,
    list_templates,
    update_hashtag_set,
    update_template,
    update_template_collection,
    use_template,
)
from socialpub_client.models.deleted_response import DeletedResponse
from socialpub_client.models.hashtag_set_create import HashtagSetCreate
from socialpub_client.models.hashtag_set_list import HashtagSetList
from socialpub_client.models.hashtag_set_response import HashtagSetResponse
from socialpub_client.models.hashtag_set_update import HashtagSetUpdate
from socialpub_client.models.platform_input import PlatformInput
from socialpub_client.models.template_collection_create import TemplateCollectionCreate
from socialpub_client.models.template_collection_list import TemplateCollectionList
from socialpub_client.models.template_collection_response import TemplateCollectionResponse
from socialpub_client.models.template_collection_update import TemplateCollectionUpdate
from socialpub_client.models.template_create import TemplateCreate
from socialpub_client.models.template_kind_filter import TemplateKindFilter
from socialpub_client.models.template_list import TemplateList
from socialpub_client.models.template_response import TemplateResponse
from socialpub_client.models.template_update import TemplateUpdate
from socialpub_client.models.template_use import TemplateUse
from socialpub_client.models.template_use_create_post import TemplateUseCreatePost
from socialpub_client.models.template_use_response import TemplateUseResponse
from socialpub_client.models.template_variable import TemplateVariable
from socialpub_client.models.template_variable_values import TemplateVariableValues
from socialpub_client.types import Unset

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow


def _values(**values: str) -> TemplateVariableValues:
    filled = TemplateVariableValues()
    for name, value in values.items():
        filled[name] = value
    return filled


def test_templates_from_saving_to_using(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    tags = expect(
        create_hashtag_set.sync_detailed(client=client, body=HashtagSetCreate(name="Journey tags", hashtags=["#Coffee", "latte", "coffee"])),
        201, HashtagSetResponse,
    ).data
    assert tags.hashtags == ["coffee", "latte"]
    collection = expect(
        create_template_collection.sync_detailed(client=client, body=TemplateCollectionCreate(name="Journey collection")),
        201, TemplateCollectionResponse,
    ).data
    body = TemplateCreate(
        name="Journey special", content="Today at {{shop}}: {{dish}}.",
        variables=[TemplateVariable(name="shop", default="our café"), TemplateVariable(name="dish", required=True)],
        collection_id=collection.id, platforms=[PlatformInput.THREADS], hashtag_set_ids=[tags.id],
    )
    template = expect(create_template.sync_detailed(client=client, body=body), 201, TemplateResponse).data
    assert template.usage_count == 0 and template.collection_id == collection.id

    # The same name again, and a placeholder that is not declared.
    expect_error(create_template.sync_detailed(client=client, body=body), 409, "conflict")
    undeclared = TemplateCreate(name="Journey broken", content="Hi {{name}}")
    expect_error(create_template.sync_detailed(client=client, body=undeclared), 422, "validation_error")

    found = expect(list_templates.sync_detailed(client=client, q="journey SPECIAL"), 200, TemplateList)
    assert [t.id for t in found.data] == [template.id]
    in_collection = expect(
        list_templates.sync_detailed(client=client, collection_id=collection.id, platform=PlatformInput.THREADS,
                                     kind=TemplateKindFilter.CONTENT),
        200, TemplateList,
    )
    assert [t.id for t in in_collection.data] == [template.id]
    collections = expect(list_template_collections.sync_detailed(client=client, limit=100), 200, TemplateCollectionList)
    assert [c.template_count for c in collections.data if c.id == collection.id] == [1]
    sets = expect(list_hashtag_sets.sync_detailed(client=client, limit=100), 200, HashtagSetList)
    assert tags.id in {s.id for s in sets.data}

    filled = expect(
        use_template.sync_detailed(template.id, client=client, body=TemplateUse(variables=_values(dish="soup"))),
        200, TemplateUseResponse,
    ).data
    # Threads takes one hashtag.
    assert filled.content == "Today at our café: soup.\n\n#coffee" and filled.hashtags == ["#coffee"]
    assert isinstance(filled.post, Unset)
    expect_error(use_template.sync_detailed(template.id, client=client, body=TemplateUse()), 422, "validation_error")

    used_for_a_post = use_template.sync_detailed(
        template.id, client=client,
        body=TemplateUse(variables=_values(dish="stew"), create_post=TemplateUseCreatePost(platforms=[PlatformInput.LINKEDIN])),
    )
    drafted = expect(used_for_a_post, 201, TemplateUseResponse).data
    assert not isinstance(drafted.post, Unset)
    assert used_for_a_post.headers["Location"] == f"/api/v1/posts/{drafted.post.id}"
    assert drafted.post.status == "draft" and drafted.post.content == "Today at our café: stew.\n\n#coffee #latte"

    updated = expect(
        update_template.sync_detailed(template.id, client=client, body=TemplateUpdate(name="Journey special (winter)")),
        200, TemplateResponse,
    ).data
    assert updated.name == "Journey special (winter)" and updated.usage_count == 2
    assert expect(get_template.sync_detailed(template.id, client=client), 200, TemplateResponse).data.last_used_at

    deleted = expect(delete_template.sync_detailed(template.id, client=client), 200, DeletedResponse).data
    assert deleted.id == template.id
    expect_error(get_template.sync_detailed(template.id, client=client), 404, "resource_not_found")


def test_collections_and_hashtag_sets_renamed_changed_and_removed(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    tags = expect(
        create_hashtag_set.sync_detailed(client=client, body=HashtagSetCreate(name="Bakery tags", hashtags=["bread"])),
        201, HashtagSetResponse,
    ).data
    other_tags = expect(
        create_hashtag_set.sync_detailed(client=client, body=HashtagSetCreate(name="Other tags", hashtags=["other"])),
        201, HashtagSetResponse,
    ).data
    collection = expect(
        create_template_collection.sync_detailed(client=client, body=TemplateCollectionCreate(name="Bakery")),
        201, TemplateCollectionResponse,
    ).data
    template = expect(create_template.sync_detailed(client=client, body=TemplateCreate(
        name="Bakery special", content="Fresh today.", collection_id=collection.id, hashtag_set_ids=[tags.id],
    )), 201, TemplateResponse).data

    renamed = expect(
        update_template_collection.sync_detailed(collection.id, client=client, body=TemplateCollectionUpdate(
            name="Bakery (winter)", description="Cold-day bakes",
        )),
        200, TemplateCollectionResponse,
    ).data
    assert renamed.name == "Bakery (winter)" and renamed.description == "Cold-day bakes" and renamed.template_count == 1
    changed = expect(
        update_hashtag_set.sync_detailed(tags.id, client=client, body=HashtagSetUpdate(hashtags=["#Rye", "bread"])),
        200, HashtagSetResponse,
    ).data
    assert changed.hashtags == ["rye", "bread"]
    expect_error(
        update_hashtag_set.sync_detailed(tags.id, client=client, body=HashtagSetUpdate(name=other_tags.name)),
        409, "conflict",
    )
    expect_error(
        update_hashtag_set.sync_detailed(tags.id, client=client, body=HashtagSetUpdate(hashtags=["not a tag"])),
        422, "validation_error",
    )
    filled = expect(use_template.sync_detailed(template.id, client=client, body=TemplateUse()), 200,
                    TemplateUseResponse).data
    assert filled.hashtags == ["#rye", "#bread"]

    gone = expect(delete_template_collection.sync_detailed(collection.id, client=client), 200, DeletedResponse).data
    assert gone.id == collection.id and gone.deleted
    expect_error(delete_template_collection.sync_detailed(collection.id, client=client), 404, "resource_not_found")
    expect(delete_hashtag_set.sync_detailed(tags.id, client=client), 200, DeletedResponse)
    kept = expect(get_template.sync_detailed(template.id, client=client), 200, TemplateResponse).data
    assert kept.collection_id is None and kept.hashtag_set_ids == []
