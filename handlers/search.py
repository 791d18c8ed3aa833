"""Handlers of the `search` tag."""
from socialpub import envelope
from socialpub.request import current_principal, current_session
from socialpub.search import service
from socialpub.search.schemas import SearchResultSchema

result_schema = SearchResultSchema()


def _dump(found):
    return result_schema.dump(found, many=True)


def search_workspace(q, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    found = service.search(session=current_session(), principal=current_principal(), q=q, limit=limit, offset=offset)
    return envelope.page(found.page, _dump, counts=found.counts, countsExact=found.counts_exact, didYouMean=found.did_you_mean)


def search_index(index, q, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    found = service.search(session=current_session(), principal=current_principal(), q=q, index=index, limit=limit,
                           offset=offset)
    return envelope.page(found.page, _dump, countsExact=found.counts_exact, didYouMean=found.did_you_mean)
