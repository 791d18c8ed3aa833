"""`socialpub template list|show`: a workspace's content and reply templates."""
from __future__ import annotations

from persistence.templates import Template
from socialpub.cli.records import Noun, by_service, paged
from socialpub.templates import service
from socialpub.templates.schemas import TemplateSchema

NOUN = Noun(
    name="template", help="content templates", model=Template, resource="template",
    list_records=paged(service.list_templates), show_record=by_service(service.get_template, "template_id"),
    dump=TemplateSchema().dump, columns=("id", "livemode", "kind", "name", "usageCount", "lastUsedAt"),
)
register = NOUN.register
