"""Handlers of the `linkinbio` tag."""
from socialpub import envelope
from socialpub.linkinbio import analytics, service
from socialpub.linkinbio.schemas import (
    AnalyticsSchema,
    BlockInputSchema,
    BlockSchema,
    PageDetailSchema,
    PageInputSchema,
    PageSchema,
    PublishInputSchema,
)
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_runtime, current_session, load

page_schema = PageSchema()
detail_schema = PageDetailSchema()
page_input_schema = PageInputSchema()
publish_input_schema = PublishInputSchema()
block_schema = BlockSchema()
block_input_schema = BlockInputSchema()
analytics_schema = AnalyticsSchema()


def list_linkinbio_pages(status=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = service.list_pages(session=current_session(), principal=current_principal(), status=status, limit=limit,
                                offset=offset)
    return envelope.page(result, lambda found: page_schema.dump(found, many=True))


def create_linkinbio_page(body):
    fields = load(page_input_schema, body)
    page = service.create_page(session=current_session(), principal=current_principal(),
                               settings=current_runtime().settings, **fields)
    return envelope.created(detail_schema.dump(page), location=f"{API_PREFIX}/linkinbio/pages/{page.id}")


def get_linkinbio_page(page_id):
    page = service.get_page(session=current_session(), principal=current_principal(), page_id=page_id)
    return envelope.ok(detail_schema.dump(page))


def publish_linkinbio_page(page_id, body):
    fields = load(publish_input_schema, body)
    page = service.publish_page(session=current_session(), principal=current_principal(), page_id=page_id, **fields)
    return envelope.ok(detail_schema.dump(page))


def add_linkinbio_block(page_id, body):
    fields = load(block_input_schema, body)
    block = service.add_block(session=current_session(), principal=current_principal(),
                              settings=current_runtime().settings, page_id=page_id, **fields)
    return envelope.created(block_schema.dump(block), location=f"{API_PREFIX}/linkinbio/pages/{block.page_id}")


def get_linkinbio_page_analytics(page_id, from_=None, to=None):
    found = analytics.page_analytics(session=current_session(), principal=current_principal(), page_id=page_id,
                                     from_day=from_, to_day=to)
    return envelope.ok(analytics_schema.dump(found))
