"""The size cap counts decoded bytes as they are decoded: compression bombs (one coding
or stacked) are refused with the memory of the cap and a step, not of what they
inflate to; bodies up to the cap decode as sent."""
import gzip
import os
import tracemalloc
import zlib

import pytest

from socialpub import outbound
from socialpub.outbound import (
    ACCEPT_ENCODING,
    DECODERS,
    Allowlist,
    GuardedClient,
    OutboundFailed,
    ResponseTooLarge,
    UndecodableResponse,
)

from .conftest import GiB, MiB, brotli_zeros, gzip_zeros, raw_deflate_zeros, zlib_zeros

CAP = 5 * MiB
# Refusing a bomb may hold the cap's worth of decoded bytes, a step of output, the
# decoder's window and the connection's buffers: far from the gibibyte inside.
MEMORY_BOUND = CAP + 16 * MiB

needs_brotli = pytest.mark.skipif("br" not in DECODERS, reason="no Brotli >= 1.2 installed")
needs_zstd = pytest.mark.skipif("zstd" not in DECODERS, reason="zstandard is not installed")


def client(max_bytes: int = CAP) -> GuardedClient:
    return GuardedClient(allowlist=Allowlist.parse("127.0.0.1"), max_bytes=max_bytes)


def refused_with_peak(url: str, error: type[Exception], match: str, max_bytes: int = CAP):
    """The refusal, and the most memory Python allocated while reaching it."""
    tracemalloc.start()
    try:
        with pytest.raises(error, match=match) as refused:
            client(max_bytes).get(url)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return refused.value, peak


def compressed(coding: str, body: bytes) -> bytes:
    if coding == "gzip":
        return gzip.compress(body)
    if coding == "deflate":
        return zlib.compress(body)
    if coding == "raw deflate":
        compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        return compressor.compress(body) + compressor.flush()
    if coding == "br":
        import brotli

        return brotli.compress(body)
    if coding == "zstd":
        import zstandard

        return zstandard.ZstdCompressor().compress(body)
    assert coding == "identity"
    return body


def header(coding: str) -> tuple[str, ...]:
    return {"identity": (), "raw deflate": ("deflate",)}.get(coding, (coding,))


CODINGS = [
    "identity", "gzip", "deflate", "raw deflate",
    pytest.param("br", marks=needs_brotli), pytest.param("zstd", marks=needs_zstd),
]


def varied(size: int) -> bytes:
    """Text that compresses, noise that does not, and a long run: several decoding
    steps of each."""
    pattern = (b'{"title": "A post", "text": "Hello, world"}\n' * (size // 3 // 44 + 1))[: size // 3]
    noise = os.urandom(size // 3)
    return (pattern + noise + bytes(size))[:size]


class TestBombBuilders:
    """The bombs the tests serve are well-formed streams of zeros (checked at 8 MiB;
    the gibibyte ones differ only in how often the same piece repeats)."""

    def test_gzip_zlib_and_raw_deflate(self):
        assert gzip.decompress(b"".join(gzip_zeros(8 * MiB))) == bytes(8 * MiB)
        assert zlib.decompress(b"".join(zlib_zeros(8 * MiB))) == bytes(8 * MiB)
        assert zlib.decompress(b"".join(raw_deflate_zeros(8 * MiB)), -zlib.MAX_WBITS) == bytes(8 * MiB)

    def test_brotli(self):
        brotli = pytest.importorskip("brotli")
        assert brotli.decompress(b"".join(brotli_zeros(8 * MiB))) == bytes(8 * MiB)

    def test_sizes(self, bombs):
        assert len(bombs.gzip) < 2 * MiB  # a gibibyte inside
        assert len(bombs.gzip_gzip) < 8 * 1024  # the same gibibyte behind two layers


class TestStackedCodings:
    def test_gzip_gzip_bomb_is_refused_before_anything_is_decoded(self, encoded_server, bombs):
        url = encoded_server.serve(bombs.gzip_gzip, "gzip, gzip")
        error, peak = refused_with_peak(url, UndecodableResponse, r"encoded more than once \(Content-Encoding: gzip, gzip\)")
        assert isinstance(error, OutboundFailed)
        assert error.status_code == 200
        assert peak < 4 * MiB, f"{peak / MiB:.1f} MiB allocated to refuse a stacked coding"

    @pytest.mark.parametrize("encodings", [("gzip, br",), ("deflate, gzip",), ("gzip", "gzip"), ("br", "zstd")])
    def test_any_two_codings_are_refused(self, encoded_server, encodings):
        url = encoded_server.serve(gzip.compress(gzip.compress(b"hello")), *encodings)
        with pytest.raises(UndecodableResponse, match="one content coding at most"):
            client().get(url)

    def test_identity_is_not_a_second_coding(self, encoded_server):
        url = encoded_server.serve(gzip.compress(b"hello"), "identity, gzip")
        assert client().get(url).content == b"hello"


class TestBombs:
    def test_gzip_bomb_is_refused_at_the_cap(self, encoded_server, bombs):
        url = encoded_server.serve(bombs.gzip, "gzip")
        error, peak = refused_with_peak(url, ResponseTooLarge, f"larger than {CAP} bytes decoded from gzip")
        assert error.status_code == 200
        assert peak < MEMORY_BOUND, f"{peak / MiB:.1f} MiB allocated to refuse a {GiB >> 30} GiB gzip bomb"

    @pytest.mark.parametrize("kind", ["deflate", "raw_deflate"])
    def test_deflate_bomb_is_refused_at_the_cap(self, encoded_server, bombs, kind):
        url = encoded_server.serve(getattr(bombs, kind), "deflate")
        _, peak = refused_with_peak(url, ResponseTooLarge, f"larger than {CAP} bytes decoded from deflate")
        assert peak < MEMORY_BOUND, f"{peak / MiB:.1f} MiB allocated to refuse a deflate bomb"

    @needs_brotli
    def test_brotli_bomb_is_refused_at_the_cap(self, encoded_server, bombs):
        url = encoded_server.serve(bombs.br, "br")
        _, peak = refused_with_peak(url, ResponseTooLarge, f"larger than {CAP} bytes decoded from br")
        # Brotli's own buffers are not Python's: what Python holds is still the cap and a step.
        assert peak < MEMORY_BOUND, f"{peak / MiB:.1f} MiB allocated to refuse a brotli bomb"

    @needs_zstd
    def test_zstd_bomb_is_refused_at_the_cap(self, encoded_server):
        import zstandard

        compressor = zstandard.ZstdCompressor(level=3).compressobj()
        body = b"".join([*(compressor.compress(bytes(MiB)) for _ in range(256)), compressor.flush()])
        url = encoded_server.serve(body, "zstd")
        _, peak = refused_with_peak(url, ResponseTooLarge, f"larger than {CAP} bytes decoded from zstd")
        assert peak < MEMORY_BOUND

    def test_a_body_that_keeps_coming_without_decoding_to_anything_ends(self, encoded_server):
        # A complete gzip member, then bytes the decoder ignores: only the raw bytes grow.
        url = encoded_server.serve(gzip.compress(b"hi") + bytes(64 * 1024), "gzip")
        with pytest.raises(ResponseTooLarge, match="larger than 1000 bytes: over 17394 bytes of gzip received"):
            client(max_bytes=1000).get(url)


class TestDecoding:
    @pytest.mark.parametrize("coding", CODINGS)
    def test_a_body_under_the_cap_decodes_as_sent(self, encoded_server, coding):
        body = varied(300_000)
        response = client(max_bytes=1_000_000).get(encoded_server.serve(compressed(coding, body), *header(coding)))
        assert response.content == body

    def test_a_gzip_json_answer_reads_as_json(self, encoded_server):
        url = encoded_server.serve(gzip.compress(b'{"items": [1, 2, 3]}'), "gzip")
        response = client().get(url)
        assert response.json() == {"items": [1, 2, 3]}
        assert response.status_code == 200

    @pytest.mark.parametrize("coding", CODINGS)
    def test_exactly_the_cap_is_accepted_and_a_byte_more_refused(self, encoded_server, coding):
        cap = 3 * outbound.DECODE_STEP + 123  # several steps, and a partial one
        body = varied(cap)
        assert client(max_bytes=cap).get(encoded_server.serve(compressed(coding, body), *header(coding))).content == body
        with pytest.raises(ResponseTooLarge, match=f"larger than {cap} bytes"):
            client(max_bytes=cap).get(encoded_server.serve(compressed(coding, body + b"!"), *header(coding)))

    def test_gzip_members_one_after_the_other_decode_as_one_body(self, encoded_server):
        url = encoded_server.serve(gzip.compress(b"first, ") + gzip.compress(b"second"), "gzip")
        assert client().get(url).content == b"first, second"

    def test_x_gzip_is_gzip(self, encoded_server):
        assert client().get(encoded_server.serve(gzip.compress(b"hello"), "x-gzip")).content == b"hello"

    def test_a_coding_name_is_read_whatever_its_case(self, encoded_server):
        assert client().get(encoded_server.serve(gzip.compress(b"hello"), "GZip")).content == b"hello"


class TestRefusedCodings:
    @pytest.mark.parametrize("coding", ["compress", "lzma", "exi", "pack200-gzip"])
    def test_an_unknown_coding_is_refused(self, encoded_server, coding):
        with pytest.raises(UndecodableResponse, match=f"content coding '{coding}' is not supported"):
            client().get(encoded_server.serve(b"whatever", coding))

    @pytest.mark.skipif("br" in DECODERS, reason="Brotli >= 1.2 is installed here")
    def test_br_without_a_bounded_decoder_is_refused(self, encoded_server):
        with pytest.raises(UndecodableResponse, match="'br' is not supported"):
            client().get(encoded_server.serve(b"\x0b\x02\x80hello\x03", "br"))

    @pytest.mark.parametrize("coding", ["gzip", "deflate"])
    def test_a_corrupt_stream_is_refused(self, encoded_server, coding):
        with pytest.raises(UndecodableResponse, match=f"{coding} content could not be decoded"):
            client().get(encoded_server.serve(b"this was never compressed", coding))


class TestAcceptEncoding:
    def test_requests_offer_only_what_is_decoded(self, encoded_server):
        offered = client().get(f"{encoded_server.url}/accept-encoding").text
        assert offered == ACCEPT_ENCODING
        assert set(offered.split(", ")) <= set(DECODERS)

    def test_a_callers_own_accept_encoding_is_sent_as_given(self, encoded_server):
        response = client().get(f"{encoded_server.url}/accept-encoding", headers={"accept-encoding": "identity"})
        assert response.text == "identity"
