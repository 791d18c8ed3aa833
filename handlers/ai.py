"""Handlers of the `AI assistant` tag."""
from socialpub import envelope
from socialpub.ai import brand_context as brand_context_service
from socialpub.ai import service as ai_service
from socialpub.ai.schemas import (
    BrandContextSchema,
    ChatReplySchema,
    ChatRequestSchema,
    ConversationSchema,
    InsightReportSchema,
    MessageSchema,
)
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_runtime, current_session, load

brand_context_schema = BrandContextSchema()
chat_request_schema = ChatRequestSchema()
chat_reply_schema = ChatReplySchema()
conversation_schema = ConversationSchema()
message_schema = MessageSchema()
insight_report_schema = InsightReportSchema()


def get_brand_context():
    context = brand_context_service.brand_context_of(session=current_session(), principal=current_principal())
    return envelope.ok(brand_context_schema.dump(context))


def send_chat_message(body):
    fields = load(chat_request_schema, body)
    reply = ai_service.send_message(
        session=current_session(), principal=current_principal(), settings=current_runtime().settings, **fields,
    )
    location = f"{API_PREFIX}/ai/conversations/{reply.conversation_id}/messages"
    if reply.started:
        return envelope.created(chat_reply_schema.dump(reply), location)
    return envelope.ok(chat_reply_schema.dump(reply), headers={"Location": location})


def list_conversations(limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = ai_service.list_conversations(
        session=current_session(), principal=current_principal(), limit=limit, offset=offset
    )
    return envelope.page(result, lambda conversations: conversation_schema.dump(conversations, many=True))


def list_conversation_messages(conversation_id, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = ai_service.list_messages(
        session=current_session(), principal=current_principal(), conversation_id=conversation_id,
        limit=limit, offset=offset,
    )
    return envelope.page(result, lambda messages: message_schema.dump(messages, many=True))


def list_insights(period="30d"):
    report = ai_service.list_insights(
        session=current_session(), principal=current_principal(), settings=current_runtime().settings, period=period,
    )
    return envelope.ok(insight_report_schema.dump(report))
