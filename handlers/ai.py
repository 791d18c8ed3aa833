"""Handlers of the `AI assistant` tag."""
from socialpub import envelope
from socialpub.request import current_principal, current_session
from socialpub.ai.schemas import BrandContextSchema
from socialpub.ai import brand_context as brand_context_service

brand_context_schema = BrandContextSchema()


def get_brand_context():
    context = brand_context_service.get_brand_context(
        session=current_session(), workspace_id=current_principal().workspace_id
    )
    return envelope.ok(brand_context_schema.dump(context))
