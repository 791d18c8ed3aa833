"""Handlers of the `templates` tag."""
from socialpub import envelope
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_runtime, current_session, load
from socialpub.templates import groups as group_service
from socialpub.templates import service as template_service
from socialpub.templates.schemas import (
    CollectionSchema,
    HashtagSetSchema,
    TemplateSchema,
    TemplateUseResultSchema,
    TemplateUseSchema,
)

template_schema = TemplateSchema()
use_schema = TemplateUseSchema()
use_result_schema = TemplateUseResultSchema()
collection_schema = CollectionSchema()
hashtag_set_schema = HashtagSetSchema()


def list_templates(q=None, collection_id=None, platform=None, kind=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = template_service.list_templates(
        session=current_session(), principal=current_principal(), q=q, collection_id=collection_id,
        platform=platform, kind=kind, limit=limit, offset=offset,
    )
    return envelope.page(result, lambda templates: template_schema.dump(templates, many=True))


def create_template(body):
    fields = load(template_schema, body)
    template = template_service.create_template(session=current_session(), principal=current_principal(), **fields)
    return envelope.created(template_schema.dump(template), location=f"{API_PREFIX}/templates/{template.id}")


def get_template(template_id):
    template = template_service.get_template(
        session=current_session(), principal=current_principal(), template_id=template_id
    )
    return envelope.ok(template_schema.dump(template))


def update_template(template_id, body):
    fields = load(template_schema, body, partial=True)
    template = template_service.update_template(
        session=current_session(), principal=current_principal(), template_id=template_id, **fields
    )
    return envelope.ok(template_schema.dump(template))


def delete_template(template_id):
    deleted_id = template_service.delete_template(
        session=current_session(), principal=current_principal(), template_id=template_id
    )
    return envelope.deleted(deleted_id)


def use_template(template_id, body):
    fields = load(use_schema, body)
    result = template_service.use_template(
        session=current_session(), principal=current_principal(), settings=current_runtime().settings,
        template_id=template_id, **fields,
    )
    if result.post is not None:
        return envelope.created(use_result_schema.dump(result), location=f"{API_PREFIX}/posts/{result.post.id}")
    return envelope.ok(use_result_schema.dump(result))


def list_template_collections(limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = group_service.list_collections(
        session=current_session(), principal=current_principal(), limit=limit, offset=offset
    )
    return envelope.page(result, lambda collections: collection_schema.dump(collections, many=True))


def create_template_collection(body):
    fields = load(collection_schema, body)
    collection = group_service.create_collection(session=current_session(), principal=current_principal(), **fields)
    return envelope.created(collection_schema.dump(collection), location=f"{API_PREFIX}/templates/collections")


def update_template_collection(collection_id, body):
    fields = load(collection_schema, body, partial=True)
    collection = group_service.update_collection(
        session=current_session(), principal=current_principal(), collection_id=collection_id, **fields
    )
    return envelope.ok(collection_schema.dump(collection))


def delete_template_collection(collection_id):
    deleted_id = group_service.delete_collection(
        session=current_session(), principal=current_principal(), collection_id=collection_id
    )
    return envelope.deleted(deleted_id)


def list_hashtag_sets(limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = group_service.list_hashtag_sets(
        session=current_session(), principal=current_principal(), limit=limit, offset=offset
    )
    return envelope.page(result, lambda sets: hashtag_set_schema.dump(sets, many=True))


def create_hashtag_set(body):
    fields = load(hashtag_set_schema, body)
    hashtag_set = group_service.create_hashtag_set(session=current_session(), principal=current_principal(), **fields)
    return envelope.created(hashtag_set_schema.dump(hashtag_set), location=f"{API_PREFIX}/templates/hashtags/sets")


def update_hashtag_set(set_id, body):
    fields = load(hashtag_set_schema, body, partial=True)
    hashtag_set = group_service.update_hashtag_set(
        session=current_session(), principal=current_principal(), set_id=set_id, **fields
    )
    return envelope.ok(hashtag_set_schema.dump(hashtag_set))


def delete_hashtag_set(set_id):
    deleted_id = group_service.delete_hashtag_set(session=current_session(), principal=current_principal(), set_id=set_id)
    return envelope.deleted(deleted_id)
